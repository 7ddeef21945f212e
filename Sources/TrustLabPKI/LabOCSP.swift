import Crypto
import SwiftASN1
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// OCSP responses (RFC 6960 §4.2) as the lab's authorities sign them, well-formed by default and bent on request (a
/// delegated responder with or without id-kp-OCSPSigning, a stranger's signature, a responderID by key, stale or
/// future times, no nextUpdate, a wrong nonce) — for the OCSP tests, the lab responder and `trust lab`.
public struct LabOCSP: Sendable {
    /// Who signs a response.
    package enum Signer: Sendable {
        /// The certificate's issuer itself.
        case issuer
        /// A responder certificate (sent in the response's `certs`), with the key that signs.
        case delegate(LabIdentity)
        /// A key no one authorised, named as `identity`'s subject (its certificate is sent too).
        case stranger(LabIdentity)
    }

    /// What the response says about one certificate.
    public enum Status: Sendable, Hashable {
        case good
        case revoked(at: Date, reason: CertificateRevocationList.Reason?)
        case unknown
    }

    /// How a response departs from a well-formed, current one.
    package struct Variation: Sendable {
        /// thisUpdate, relative to now (default an hour ago).
        package var thisUpdate: TimeInterval = -3_600
        /// nextUpdate, relative to now (default in 7 days); `nil` leaves it out.
        package var nextUpdate: TimeInterval? = 7 * 86_400
        /// producedAt, relative to now (default now).
        package var producedAt: TimeInterval = 0
        /// Name the responder by its key hash (byKey) instead of its name.
        package var responderByKey = false
        /// Answer with this nonce instead of echoing the request's.
        package var nonce: [UInt8]?
        /// Echo no nonce even when the request has one.
        package var omitsNonce = false
        /// No variation.
        package init() {}
    }

    /// A delegated OCSP responder certificate issued by `issuer`: with extendedKeyUsage id-kp-OCSPSigning unless
    /// `ocspSigning` is `false` (then serverAuth, which does not authorise OCSP signing).
    package static func responder(issuedBy issuer: LabAuthority, ocspSigning: Bool = true, notAfter: Date = Date(timeIntervalSinceNow: 30 * 86_400)) throws
        -> LabIdentity
    {
        try issuer.leaf(
            commonName: "swift-trust lab OCSP responder", notAfter: notAfter,
            extendedKeyUsage: [ocspSigning ? ExtendedKeyUsage.Usage(oid: [1, 3, 6, 1, 5, 5, 7, 3, 9]) : .serverAuth])
    }

    /// An unsuccessful response: just the status (RFC 6960 §4.2.1: no responseBytes).
    public static func unsuccessful(_ status: OCSPResponse.Status) -> [UInt8] {
        [0x30, 0x03, 0x0A, 0x01, UInt8(status.rawValue)]
    }

    /// A successful basic response about `ids` (in request order), each status from `status`, signed by `signer` for
    /// `issuer`; `requestNonce` is echoed (RFC 8954 §2.1) unless the variation says otherwise.
    package static func response(
        for ids: [OCSPCertificateID], issuer: LabAuthority, signer: Signer = .issuer, requestNonce: [UInt8]? = nil,
        variation: Variation = Variation(), status: (OCSPCertificateID) -> Status
    ) throws -> [UInt8] {
        let now = Date()
        let signing: LabIdentity
        var certificates: [Certificate] = []
        switch signer {
        case .issuer: signing = issuer.identity
        case .delegate(let identity), .stranger(let identity):
            signing = identity
            certificates = [identity.certificate]
        }
        let algorithm = try LabCRL.algorithmIdentifier(signing.keyType)
        var tbs = DER.Serializer()
        try tbs.appendConstructedNode(identifier: .sequence) { data in
            if variation.responderByKey {
                let hash = Array(Insecure.SHA1.hash(data: signing.certificate.publicKey.subjectPublicKeyInfoBytes))
                try data.serialize(explicitlyTaggedWithTagNumber: 2, tagClass: .contextSpecific) { try $0.serialize(ASN1OctetString(contentBytes: hash[...])) }
            } else {
                try data.serialize(explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific) { try $0.serialize(signing.certificate.subject) }
            }
            try data.serialize(generalizedTime(now + variation.producedAt))
            try data.appendConstructedNode(identifier: .sequence) { list in
                for id in ids {
                    try list.appendConstructedNode(identifier: .sequence) { single in
                        single.serializeRawBytes(try id.derBytes())
                        switch status(id) {
                        case .good:
                            single.appendPrimitiveNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)) { _ in }
                        case .unknown:
                            single.appendPrimitiveNode(identifier: ASN1Identifier(tagWithNumber: 2, tagClass: .contextSpecific)) { _ in }
                        case .revoked(let at, let reason):
                            try single.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)) { info in
                                try info.serialize(generalizedTime(at))
                                if let reason {
                                    info.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { tagged in
                                        tagged.appendPrimitiveNode(identifier: ASN1Identifier(tagWithNumber: 10, tagClass: .universal)) {
                                            $0.append(UInt8(reason.rawValue))
                                        }
                                    }
                                }
                            }
                        }
                        try single.serialize(generalizedTime(now + variation.thisUpdate))
                        if let next = variation.nextUpdate {
                            try single.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { try $0.serialize(generalizedTime(now + next)) }
                        }
                    }
                }
            }
            let nonce = variation.omitsNonce ? nil : (variation.nonce ?? requestNonce)
            if let nonce {
                var value = DER.Serializer()
                try value.serialize(ASN1OctetString(contentBytes: nonce[...]))
                try data.serialize(explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific) { explicit in
                    try explicit.appendConstructedNode(identifier: .sequence) { extensions in
                        try extensions.serialize(
                            Certificate.Extension(oid: [1, 3, 6, 1, 5, 5, 7, 48, 1, 2], critical: false, value: value.serializedBytes[...]))
                    }
                }
            }
        }
        let signature = try signing.privateKey.sign(bytes: tbs.serializedBytes, signatureAlgorithm: signing.keyType.signatureAlgorithm)
        var basic = DER.Serializer()
        try basic.appendConstructedNode(identifier: .sequence) { list in
            list.serializeRawBytes(tbs.serializedBytes)
            list.serializeRawBytes(algorithm)
            try list.serialize(ASN1BitString(bytes: signature.rawRepresentation[...]))
            if !certificates.isEmpty {
                try list.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { explicit in
                    try explicit.appendConstructedNode(identifier: .sequence) { certs in
                        for certificate in certificates { try certs.serialize(certificate) }
                    }
                }
            }
        }
        var whole = DER.Serializer()
        try whole.appendConstructedNode(identifier: .sequence) { response in
            response.appendPrimitiveNode(identifier: ASN1Identifier(tagWithNumber: 10, tagClass: .universal)) { $0.append(0) }
            try response.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { explicit in
                try explicit.appendConstructedNode(identifier: .sequence) { bytes in
                    try bytes.serialize([1, 3, 6, 1, 5, 5, 7, 48, 1, 1] as ASN1ObjectIdentifier)
                    try bytes.serialize(ASN1OctetString(contentBytes: basic.serializedBytes[...]))
                }
            }
        }
        return whole.serializedBytes
    }

    /// A response about `certificate` alone (issued by `issuer`), with a SHA-1 CertID as most responders use.
    package static func response(
        about certificate: Certificate, issuer: LabAuthority, status: Status, signer: Signer = .issuer, variation: Variation = Variation(),
        hashAlgorithm: OCSPCertificateID.HashAlgorithm = .sha1
    ) throws -> [UInt8] {
        let id = try OCSPCertificateID(certificate: certificate, issuer: issuer.certificate, hashAlgorithm: hashAlgorithm)
        return try response(for: [id], issuer: issuer, signer: signer, variation: variation) { _ in status }
    }

    /// RFC 6960 uses GeneralizedTime for every time (`YYYYMMDDHHMMSSZ`, no fractions).
    static func generalizedTime(_ date: Date) throws -> GeneralizedTime {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        guard let year = c.year, let month = c.month, let day = c.day, let hour = c.hour, let minute = c.minute, let second = c.second else {
            throw LabError.cannotWrite("OCSP response", "an impossible date")
        }
        return try GeneralizedTime(year: year, month: month, day: day, hours: hour, minutes: minute, seconds: second, fractionalSeconds: 0)
    }
}

import SwiftASN1
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Certificate revocation lists the lab's authorities issue (RFC 5280 §5), well-formed by default and bent on
/// request (no CRLNumber, a critical one, a delta indicator, an unknown critical extension, a scope, another signer),
/// for the revocation tests and `trust lab`.
public struct LabCRL: Sendable {
    /// One revoked certificate.
    public struct Revoked: Sendable {
        /// Its serial number's big-endian magnitude (as `Certificate.SerialNumber.bytes`); the CRL encodes it as a
        /// positive DER INTEGER.
        public var serialNumber: [UInt8]
        /// When it was revoked.
        public var date: Date
        /// The reason code, if one is given.
        public var reason: CertificateRevocationList.Reason?

        /// `certificate` revoked at `date` for `reason`.
        public init(_ certificate: Certificate, date: Date = Date(timeIntervalSinceNow: -3_600), reason: CertificateRevocationList.Reason? = nil) {
            self.serialNumber = Array(certificate.serialNumber.bytes)
            self.date = date
            self.reason = reason
        }
    }

    /// How the CRL departs from a well-formed one.
    package struct Variation: Sendable {
        /// Leave the CRLNumber extension out.
        package var omitsNumber = false
        /// Mark the CRLNumber critical.
        package var criticalNumber = false
        /// Add a deltaCRLIndicator (a delta CRL).
        package var delta = false
        /// Add a critical extension nobody understands.
        package var unknownCriticalExtension = false
        /// An Issuing Distribution Point: only end-entity certificates.
        package var onlyUserCertificates = false
        /// An Issuing Distribution Point: only CA certificates.
        package var onlyCACertificates = false
        /// An Issuing Distribution Point: only some reasons (keyCompromise).
        package var onlySomeReasons = false
        /// An Issuing Distribution Point naming this distribution point URI.
        package var distributionPoint: String?
        /// No variation.
        package init() {}
    }

    /// The CRL, parsed.
    public let crl: CertificateRevocationList
    /// PEM (`X509 CRL`).
    public var pem: String { PEMDocument(type: "X509 CRL", derBytes: crl.derBytes).pemString + "\n" }

    /// A well-formed CRL issued under `issuer`'s name and AKI, signed by `signer`'s key (by default `issuer`'s own).
    public init(
        issuer: LabAuthority, revoked: [Revoked] = [], thisUpdate: Date = Date(timeIntervalSinceNow: -3_600),
        nextUpdate: Date? = Date(timeIntervalSinceNow: 7 * 86_400), number: Int = 1, signer: LabAuthority? = nil
    ) throws {
        try self.init(issuer: issuer, revoked: revoked, thisUpdate: thisUpdate, nextUpdate: nextUpdate, number: number, variation: Variation(), signer: signer)
    }

    /// As above, departing from a well-formed CRL as `variation` says (for the engine's own tests).
    package init(
        issuer: LabAuthority, revoked: [Revoked] = [], thisUpdate: Date = Date(timeIntervalSinceNow: -3_600),
        nextUpdate: Date? = Date(timeIntervalSinceNow: 7 * 86_400), number: Int = 1, variation: Variation, signer: LabAuthority? = nil
    ) throws {
        let signer = signer ?? issuer
        let algorithm = try Self.algorithmIdentifier(signer.identity.keyType)
        var tbs = DER.Serializer()
        try tbs.appendConstructedNode(identifier: .sequence) { tbs in
            try tbs.serialize(1)  // v2
            tbs.serializeRawBytes(algorithm)
            try tbs.serialize(issuer.certificate.subject)
            try Self.serializeTime(thisUpdate, into: &tbs)
            if let nextUpdate { try Self.serializeTime(nextUpdate, into: &tbs) }
            if !revoked.isEmpty {
                try tbs.appendConstructedNode(identifier: .sequence) { list in
                    for entry in revoked {
                        try list.appendConstructedNode(identifier: .sequence) { item in
                            item.appendPrimitiveNode(identifier: .integer) { $0.append(contentsOf: Self.positiveIntegerContent(entry.serialNumber)) }
                            try Self.serializeTime(entry.date, into: &item)
                            if let reason = entry.reason {
                                try item.appendConstructedNode(identifier: .sequence) { extensions in
                                    try extensions.serialize(
                                        Certificate.Extension(oid: [2, 5, 29, 21], critical: false, value: [0x0A, 0x01, UInt8(reason.rawValue)]))
                                }
                            }
                        }
                    }
                }
            }
            try tbs.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { explicit in
                try explicit.appendConstructedNode(identifier: .sequence) { extensions in
                    for ext in try Self.extensions(issuer: issuer, number: number, variation: variation) { try extensions.serialize(ext) }
                }
            }
        }
        let signature = try signer.identity.privateKey.sign(bytes: tbs.serializedBytes, signatureAlgorithm: signer.identity.keyType.signatureAlgorithm)
        var whole = DER.Serializer()
        try whole.appendConstructedNode(identifier: .sequence) { list in
            list.serializeRawBytes(tbs.serializedBytes)
            list.serializeRawBytes(algorithm)
            try list.serialize(ASN1BitString(bytes: signature.rawRepresentation[...]))
        }
        self.crl = try CertificateRevocationList(derEncoded: whole.serializedBytes)
    }

    private static func extensions(issuer: LabAuthority, number: Int, variation: Variation) throws -> [Certificate.Extension] {
        var extensions: [Certificate.Extension] = []
        if let ski = try issuer.certificate.extensions.subjectKeyIdentifier {
            extensions.append(try Certificate.Extension(AuthorityKeyIdentifier(keyIdentifier: ski.keyIdentifier), critical: false))
        }
        if !variation.omitsNumber {
            var encoded = DER.Serializer()
            try encoded.serialize(number: number)
            extensions.append(Certificate.Extension(oid: [2, 5, 29, 20], critical: variation.criticalNumber, value: encoded.serializedBytes[...]))
        }
        if variation.delta {
            var base = DER.Serializer()
            try base.serialize(1)
            extensions.append(Certificate.Extension(oid: [2, 5, 29, 27], critical: true, value: base.serializedBytes[...]))
        }
        if variation.unknownCriticalExtension {
            extensions.append(Certificate.Extension(oid: [1, 3, 6, 1, 4, 1, 55555, 1], critical: true, value: [0x05, 0x00]))
        }
        if variation.onlyUserCertificates || variation.onlyCACertificates || variation.onlySomeReasons || variation.distributionPoint != nil {
            var point = DER.Serializer()
            point.appendConstructedNode(identifier: .sequence) { point in
                if let uri = variation.distributionPoint {
                    // distributionPoint [0] { fullName [0] { uniformResourceIdentifier [6] } }
                    point.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)) { name in
                        name.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)) { names in
                            names.appendPrimitiveNode(identifier: ASN1Identifier(tagWithNumber: 6, tagClass: .contextSpecific)) {
                                $0.append(contentsOf: Array(uri.utf8))
                            }
                        }
                    }
                }
                if variation.onlyUserCertificates {
                    point.appendPrimitiveNode(identifier: ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific)) { $0.append(0xFF) }
                }
                if variation.onlyCACertificates {
                    point.appendPrimitiveNode(identifier: ASN1Identifier(tagWithNumber: 2, tagClass: .contextSpecific)) { $0.append(0xFF) }
                }
                if variation.onlySomeReasons {
                    // ReasonFlags BIT STRING: keyCompromise (bit 1) → 0x40, 6 unused bits.
                    point.appendPrimitiveNode(identifier: ASN1Identifier(tagWithNumber: 3, tagClass: .contextSpecific)) { $0.append(contentsOf: [0x06, 0x40]) }
                }
            }
            extensions.append(Certificate.Extension(oid: [2, 5, 29, 28], critical: true, value: point.serializedBytes[...]))
        }
        return extensions
    }

    /// A magnitude as positive DER INTEGER content: no redundant leading zeros, a 0x00 sign octet when the first bit is set.
    static func positiveIntegerContent(_ magnitude: [UInt8]) -> [UInt8] {
        var bytes = Array(magnitude.drop(while: { $0 == 0 }))
        if bytes.isEmpty { return [0] }
        if bytes[0] >= 0x80 { bytes.insert(0, at: 0) }
        return bytes
    }

    /// RFC 5280 §5.1.2.4: UTCTime through 2049, GeneralizedTime from 2050.
    private static func serializeTime(_ date: Date, into serializer: inout DER.Serializer) throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        guard let year = c.year, let month = c.month, let day = c.day, let hour = c.hour, let minute = c.minute, let second = c.second else {
            throw LabError.cannotWrite("CRL", "an impossible date")
        }
        if year < 2050 {
            try serializer.serialize(UTCTime(year: year, month: month, day: day, hours: hour, minutes: minute, seconds: second))
        } else {
            try serializer.serialize(GeneralizedTime(year: year, month: month, day: day, hours: hour, minutes: minute, seconds: second, fractionalSeconds: 0))
        }
    }

    /// The AlgorithmIdentifier DER of the lab's signature algorithm for `keyType` (RFC 4055 §5: RSA with NULL parameters).
    static func algorithmIdentifier(_ keyType: LabKeyType) throws -> [UInt8] {
        let oid: ASN1ObjectIdentifier
        var null = false
        switch keyType {
        case .rsa2048, .rsa3072, .rsa4096: (oid, null) = ([1, 2, 840, 113549, 1, 1, 11], true)
        case .p256: oid = [1, 2, 840, 10045, 4, 3, 2]
        case .p384: oid = [1, 2, 840, 10045, 4, 3, 3]
        case .p521: oid = [1, 2, 840, 10045, 4, 3, 4]
        case .ed25519: oid = [1, 3, 101, 112]
        }
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { sequence in
            try sequence.serialize(oid)
            if null { try sequence.serialize(ASN1Null()) }
        }
        return serializer.serializedBytes
    }
}

extension DER.Serializer {
    /// A non-negative INTEGER, minimally encoded.
    mutating func serialize(number: Int) throws {
        let magnitude = withUnsafeBytes(of: UInt64(max(number, 0)).bigEndian, Array.init)
        appendPrimitiveNode(identifier: .integer) { $0.append(contentsOf: LabCRL.positiveIntegerContent(magnitude)) }
    }
}

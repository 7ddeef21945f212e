import Crypto
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The identifier of one certificate in OCSP (RFC 6960 §4.1.1): hashes of its issuer's name and key, and its serial.
///
/// ```
/// CertID ::= SEQUENCE {
///     hashAlgorithm   AlgorithmIdentifier,
///     issuerNameHash  OCTET STRING, -- hash of the issuer's DN (the DER of the certificate's issuer field)
///     issuerKeyHash   OCTET STRING, -- hash of the issuer's subjectPublicKey BIT STRING value
///     serialNumber    CertificateSerialNumber }
/// ```
///
/// swift-certificates has OCSP types, but they are internal to its `OCSPVerifierPolicy`; this and ``OCSPRequest``
/// and ``OCSPResponse`` are written with swift-asn1 so requests can be sent and responses cached and decided apart
/// from path building.
public struct OCSPCertificateID: Sendable, Hashable, CustomStringConvertible {
    /// The hash of a CertID. SHA-256 is asked for by default; SHA-1 is what RFC 5019 §2.1.1 requires responders to
    /// support, and what many still insist on.
    public enum HashAlgorithm: String, Sendable, Hashable, CaseIterable {
        case sha1 = "SHA-1"
        case sha256 = "SHA-256"
        case sha384 = "SHA-384"
        case sha512 = "SHA-512"

        var oid: ASN1ObjectIdentifier {
            switch self {
            case .sha1: [1, 3, 14, 3, 2, 26]
            case .sha256: [2, 16, 840, 1, 101, 3, 4, 2, 1]
            case .sha384: [2, 16, 840, 1, 101, 3, 4, 2, 2]
            case .sha512: [2, 16, 840, 1, 101, 3, 4, 2, 3]
            }
        }

        init?(oid: ASN1ObjectIdentifier) {
            guard let match = Self.allCases.first(where: { $0.oid == oid }) else { return nil }
            self = match
        }

        /// The digest of `bytes` with this algorithm.
        public func digest(_ bytes: some DataProtocol) -> [UInt8] {
            switch self {
            case .sha1: Array(Insecure.SHA1.hash(data: bytes))
            case .sha256: Array(SHA256.hash(data: bytes))
            case .sha384: Array(SHA384.hash(data: bytes))
            case .sha512: Array(SHA512.hash(data: bytes))
            }
        }
    }

    /// The hash algorithm of the two hashes.
    public var hashAlgorithm: HashAlgorithm
    /// The hash of the issuer's distinguished name, DER-encoded.
    public var issuerNameHash: [UInt8]
    /// The hash of the issuer's public key (the subjectPublicKey BIT STRING's value).
    public var issuerKeyHash: [UInt8]
    /// The serial number's big-endian magnitude (as `Certificate.SerialNumber.bytes`, leading zeros dropped).
    public var serialNumber: [UInt8]

    /// The identifier of `certificate`, whose issuer is `issuer`.
    public init(certificate: Certificate, issuer: Certificate, hashAlgorithm: HashAlgorithm = .sha256) throws {
        var name = DER.Serializer()
        try name.serialize(certificate.issuer)
        self.init(
            hashAlgorithm: hashAlgorithm, issuerNameHash: hashAlgorithm.digest(name.serializedBytes),
            issuerKeyHash: hashAlgorithm.digest(issuer.publicKey.subjectPublicKeyInfoBytes), serialNumber: Array(certificate.serialNumber.bytes))
    }

    /// An identifier from its parts.
    package init(hashAlgorithm: HashAlgorithm, issuerNameHash: [UInt8], issuerKeyHash: [UInt8], serialNumber: [UInt8]) {
        self.hashAlgorithm = hashAlgorithm
        self.issuerNameHash = issuerNameHash
        self.issuerKeyHash = issuerKeyHash
        self.serialNumber = Array(serialNumber.drop(while: { $0 == 0 }))
    }

    /// Whether this identifies `certificate` issued by `issuer` (hashed with this identifier's own algorithm).
    package func identifies(_ certificate: Certificate, issuer: Certificate) -> Bool {
        // The serial first: it differs for every other certificate, and costs no hashing.
        guard serialNumber.elementsEqual(certificate.serialNumber.bytes.drop(while: { $0 == 0 })) else { return false }
        guard let other = try? OCSPCertificateID(certificate: certificate, issuer: issuer, hashAlgorithm: hashAlgorithm) else { return false }
        return other == self
    }

    /// Hash algorithm and serial, for messages.
    public var description: String {
        "\(hashAlgorithm) CertID for serial \(serialNumber.hexText(separator: ":"))"
    }

    // MARK: DER

    /// The DER encoding of the CertID (for responders).
    public func derBytes() throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serialize(into: &serializer)
        return serializer.serializedBytes
    }

    func serialize(into serializer: inout DER.Serializer) throws {
        try serializer.appendConstructedNode(identifier: .sequence) { id in
            try id.appendConstructedNode(identifier: .sequence) { algorithm in
                try algorithm.serialize(hashAlgorithm.oid)
                try algorithm.serialize(ASN1Null())  // as OpenSSL sends it; absent parameters are accepted when parsing
            }
            try id.serialize(ASN1OctetString(contentBytes: issuerNameHash[...]))
            try id.serialize(ASN1OctetString(contentBytes: issuerKeyHash[...]))
            id.appendPrimitiveNode(identifier: .integer) { $0.append(contentsOf: OCSPCertificateID.integerContent(serialNumber)) }
        }
    }

    /// Parses a CertID; `nil` for one whose hash algorithm is not known (it then identifies nothing here).
    static func parse(_ node: ASN1Node) throws -> OCSPCertificateID? {
        try DER.sequence(node, identifier: .sequence) { nodes in
            guard let algorithmNode = nodes.next(), let nameNode = nodes.next(), let keyNode = nodes.next(), let serialNode = nodes.next(), nodes.next() == nil
            else {
                throw OCSPParseError("a CertID is hashAlgorithm, issuerNameHash, issuerKeyHash, serialNumber")
            }
            let oid: ASN1ObjectIdentifier = try DER.sequence(algorithmNode, identifier: .sequence) { parts in
                guard let oidNode = parts.next() else { throw OCSPParseError("an empty AlgorithmIdentifier") }
                let oid = try ASN1ObjectIdentifier(derEncoded: oidNode)
                if let parameters = parts.next(), parameters.identifier != .null {
                    throw OCSPParseError("a CertID hash algorithm with parameters other than NULL")
                }
                guard parts.next() == nil else { throw OCSPParseError("extra elements in an AlgorithmIdentifier") }
                return oid
            }
            let nameHash = try ASN1OctetString(derEncoded: nameNode)
            let keyHash = try ASN1OctetString(derEncoded: keyNode)
            guard serialNode.identifier == .integer, case .primitive(let serial) = serialNode.content, !serial.isEmpty else {
                throw OCSPParseError("a CertID serialNumber that is not an INTEGER")
            }
            guard let algorithm = HashAlgorithm(oid: oid) else { return nil }
            // A negative serial (first bit set) identifies no certificate: RFC 5280 §4.1.2.2 serials are positive.
            guard serial.first.map({ $0 < 0x80 }) ?? false else { return nil }
            return OCSPCertificateID(
                hashAlgorithm: algorithm, issuerNameHash: Array(nameHash.bytes), issuerKeyHash: Array(keyHash.bytes), serialNumber: Array(serial))
        }
    }

    /// A magnitude as positive DER INTEGER content.
    static func integerContent(_ magnitude: [UInt8]) -> [UInt8] {
        var bytes = Array(magnitude.drop(while: { $0 == 0 }))
        if bytes.isEmpty { return [0] }
        if bytes[0] >= 0x80 { bytes.insert(0, at: 0) }
        return bytes
    }
}

/// An OCSP request (RFC 6960 §4.1): the certificates asked about, and an optional nonce (RFC 8954).
///
/// ```
/// OCSPRequest ::= SEQUENCE { tbsRequest TBSRequest, optionalSignature [0] EXPLICIT Signature OPTIONAL }
/// TBSRequest  ::= SEQUENCE { version [0] EXPLICIT Version DEFAULT v1, requestorName [1] EXPLICIT GeneralName OPTIONAL,
///                            requestList SEQUENCE OF Request, requestExtensions [2] EXPLICIT Extensions OPTIONAL }
/// Request     ::= SEQUENCE { reqCert CertID, singleRequestExtensions [0] EXPLICIT Extensions OPTIONAL }
/// ```
///
/// Requests are unsigned (no responder this library talks to requires a signature).
public struct OCSPRequest: Sendable, Hashable {
    /// The id-pkix-ocsp-nonce extension (RFC 6960 §4.4.1).
    static let nonceOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 48, 1, 2]

    /// The certificates asked about.
    public var certificateIDs: [OCSPCertificateID]
    /// The nonce, 1 to 32 octets (RFC 8954 §2.1), or `nil` for none (RFC 5019 §2.1.2: the lightweight profile sends none).
    public var nonce: [UInt8]?

    /// A request about `certificateIDs`.
    public init(certificateIDs: [OCSPCertificateID], nonce: [UInt8]? = nil) {
        self.certificateIDs = certificateIDs
        self.nonce = nonce
    }

    /// A fresh random nonce of 32 octets, the most RFC 8954 §2.1 allows.
    public static func randomNonce() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The DER encoding.
    public func derBytes() throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { request in
            try request.appendConstructedNode(identifier: .sequence) { tbs in
                try tbs.appendConstructedNode(identifier: .sequence) { list in
                    for id in certificateIDs {
                        try list.appendConstructedNode(identifier: .sequence) { single in try id.serialize(into: &single) }
                    }
                }
                if let nonce {
                    var value = DER.Serializer()
                    try value.serialize(ASN1OctetString(contentBytes: nonce[...]))
                    try tbs.serialize(explicitlyTaggedWithTagNumber: 2, tagClass: .contextSpecific) { explicit in
                        try explicit.appendConstructedNode(identifier: .sequence) { extensions in
                            try extensions.serialize(Certificate.Extension(oid: Self.nonceOID, critical: false, value: value.serializedBytes[...]))
                        }
                    }
                }
            }
        }
        return serializer.serializedBytes
    }

    /// A request from its DER encoding (for responders: the lab's, or a server stapling its own).
    /// - Throws: ``OCSPParseError`` for anything but a well-formed request.
    public init(derEncoded bytes: [UInt8]) throws(OCSPParseError) {
        do {
            let root = try DER.parse(bytes)
            guard root.encodedBytes.count == bytes.count else { throw OCSPParseError("bytes after the OCSPRequest") }
            var ids: [OCSPCertificateID] = []
            var nonce: [UInt8]?
            try DER.sequence(root, identifier: .sequence) { outer in
                guard let tbsNode = outer.next() else { throw OCSPParseError("an empty OCSPRequest") }
                if let signature = outer.next(), signature.identifier != ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) || outer.next() != nil {
                    throw OCSPParseError("unexpected elements after tbsRequest")
                }
                try DER.sequence(tbsNode, identifier: .sequence) { tbs in
                    var node = tbs.next()
                    if try OCSPParseError.version(node, of: "OCSPRequest") { node = tbs.next() }
                    if let name = node, name.identifier == ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific) { node = tbs.next() }
                    guard let list = node else { throw OCSPParseError("no requestList") }
                    try DER.sequence(list, identifier: .sequence) { requests in
                        while let request = requests.next() {
                            try DER.sequence(request, identifier: .sequence) { parts in
                                guard let idNode = parts.next() else { throw OCSPParseError("an empty Request") }
                                if let id = try OCSPCertificateID.parse(idNode) { ids.append(id) }
                                if let extra = parts.next(),
                                    extra.identifier != ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) || parts.next() != nil
                                {
                                    throw OCSPParseError("unexpected elements in a Request")
                                }
                            }
                        }
                    }
                    node = tbs.next()
                    if let extensionsNode = node, extensionsNode.identifier == ASN1Identifier(tagWithNumber: 2, tagClass: .contextSpecific) {
                        nonce = try OCSPParseError.nonce(inExplicitExtensions: extensionsNode, tagNumber: 2)
                        node = tbs.next()
                    }
                    guard node == nil else { throw OCSPParseError("unexpected elements in tbsRequest") }
                }
            }
            self.init(certificateIDs: ids, nonce: nonce)
        } catch let error as OCSPParseError {
            throw error
        } catch {
            throw OCSPParseError("malformed DER: \(error)")
        }
    }
}

extension OCSPRequest {
    /// The `http` URIs of `certificate`'s OCSP responders (authorityInformationAccess id-ad-ocsp, RFC 5280
    /// §4.2.2.1), in order; none without the extension or with a malformed one. RFC 6960 Appendix A.1 defines OCSP
    /// over HTTP; an `https` responder URI is kept too (a responder fetched over TLS must not itself need OCSP).
    public static func responderURIs(of certificate: Certificate) -> [String] {
        guard let access = (try? certificate.extensions.authorityInformationAccess) ?? nil else { return [] }
        return access.compactMap { description -> String? in
            guard description.method == .ocspServer, case .uniformResourceIdentifier(let uri) = description.location else { return nil }
            let scheme = uri.prefix(while: { $0 != ":" }).lowercased()
            return scheme == "http" || scheme == "https" ? uri : nil
        }
    }
}

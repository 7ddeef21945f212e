import Crypto
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A Signed Certificate Timestamp (RFC 6962 §3.2): a log's promise to include a certificate, as embedded in the
/// certificate's SCT list extension (1.3.6.1.4.1.11129.2.4.2, RFC 6962 §3.3).
///
/// ```
/// struct {
///     Version sct_version;                 // v1(0)
///     LogID id;                            // opaque key_id[32]: SHA-256 of the log's DER public key
///     uint64 timestamp;                    // milliseconds since the epoch
///     CtExtensions extensions;             // opaque <0..2^16-1>
///     digitally-signed struct { … } signature;   // hash (1 byte), signature algorithm (1 byte), opaque <0..2^16-1>
/// } SignedCertificateTimestamp;
/// ```
///
/// swift-certificates has no CT support; this TLS-encoding parser is written by hand, strictly (every length checked,
/// nothing after the last element).
public struct SignedCertificateTimestamp: Sendable, Hashable {
    /// The SCT list extension's OID.
    public static let extensionOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 4, 2]

    /// The SCT version (0 is v1, the only one defined by RFC 6962).
    package var version: UInt8
    /// The log's ID: the SHA-256 of its DER SubjectPublicKeyInfo.
    package var logID: [UInt8]
    /// When the log saw the certificate.
    public var timestamp: Date
    /// The timestamp as the log wrote it (milliseconds since 1970).
    public var timestampMilliseconds: UInt64
    /// The CtExtensions (none defined by RFC 6962).
    package var extensions: [UInt8]
    /// The TLS HashAlgorithm of the signature (4: SHA-256).
    package var hashAlgorithm: UInt8
    /// The TLS SignatureAlgorithm of the signature (1: RSA, 3: ECDSA).
    package var signatureAlgorithm: UInt8
    /// The signature bytes (DER ECDSA-Sig-Value or an RSA PKCS #1 v1.5 signature).
    package var signature: [UInt8]

    /// An SCT from its fields (`timestamp` is `timestampMilliseconds` as a date).
    public init(
        version: UInt8 = 0, logID: [UInt8], timestamp: Date, timestampMilliseconds: UInt64, extensions: [UInt8] = [], hashAlgorithm: UInt8,
        signatureAlgorithm: UInt8, signature: [UInt8]
    ) {
        self.version = version
        self.logID = logID
        self.timestamp = timestamp
        self.timestampMilliseconds = timestampMilliseconds
        self.extensions = extensions
        self.hashAlgorithm = hashAlgorithm
        self.signatureAlgorithm = signatureAlgorithm
        self.signature = signature
    }

    /// The log ID in base64, as log lists write it.
    package var logIDBase64: String { Data(logID).base64EncodedString() }

    /// Malformed SCT list bytes.
    package struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        package var detail: String
        init(_ detail: String) { self.detail = detail }
        /// "malformed SCT list: …".
        package var description: String { "malformed SCT list: \(detail)" }
    }

    /// The SCTs embedded in `certificate` (none without the extension).
    /// - Throws: ``ParseError`` for a malformed extension.
    package static func embedded(in certificate: Certificate) throws(ParseError) -> [SignedCertificateTimestamp] {
        guard let ext = certificate.extensions[oid: extensionOID] else { return [] }
        let list: ArraySlice<UInt8>
        do {
            list = try ASN1OctetString(derEncoded: ext.value).bytes
        } catch {
            throw ParseError("the extension's value is not an OCTET STRING")
        }
        return try parseList(Array(list))
    }

    /// A SignedCertificateTimestampList (RFC 6962 §3.3): `opaque SerializedSCT<1..2^16-1>` items inside a
    /// `<1..2^16-1>` list. SCTs of versions other than v1 are skipped (RFC 6962 §3.3: clients must ignore them).
    package static func parseList(_ bytes: [UInt8]) throws(ParseError) -> [SignedCertificateTimestamp] {
        var reader = TLSReader(bytes[...])
        let list = try reader.vector(lengthBytes: 2, what: "the SCT list")
        guard reader.isAtEnd else { throw ParseError("bytes after the SCT list") }
        guard !list.isEmpty else { throw ParseError("an empty SCT list") }
        var items = TLSReader(list)
        var scts: [SignedCertificateTimestamp] = []
        while !items.isAtEnd {
            let serialized = try items.vector(lengthBytes: 2, what: "an SCT")
            guard !serialized.isEmpty else { throw ParseError("an empty SCT") }
            if let sct = try parse(serialized) { scts.append(sct) }
        }
        return scts
    }

    /// One SerializedSCT; `nil` for a version this library does not know.
    static func parse(_ bytes: ArraySlice<UInt8>) throws(ParseError) -> SignedCertificateTimestamp? {
        var reader = TLSReader(bytes)
        let version = try reader.byte(what: "the SCT version")
        guard version == 0 else { return nil }
        let logID = try reader.bytes(32, what: "the log ID")
        let milliseconds = try reader.integer(8, what: "the timestamp")
        let extensions = try reader.vector(lengthBytes: 2, what: "the SCT extensions")
        let hash = try reader.byte(what: "the hash algorithm")
        let signatureAlgorithm = try reader.byte(what: "the signature algorithm")
        let signature = try reader.vector(lengthBytes: 2, what: "the signature")
        guard reader.isAtEnd else { throw ParseError("bytes after an SCT's signature") }
        guard !signature.isEmpty else { throw ParseError("an empty SCT signature") }
        return SignedCertificateTimestamp(
            version: version, logID: Array(logID), timestamp: Date(timeIntervalSince1970: Double(milliseconds) / 1000), timestampMilliseconds: milliseconds,
            extensions: Array(extensions), hashAlgorithm: hash, signatureAlgorithm: signatureAlgorithm, signature: Array(signature))
    }

    /// The TLS encoding of this SCT (a SerializedSCT's content).
    package func serialized() -> [UInt8] {
        var bytes: [UInt8] = [version] + logID
        bytes += Self.bigEndian(timestampMilliseconds)
        bytes += [UInt8(extensions.count >> 8), UInt8(extensions.count & 0xFF)] + extensions
        bytes += [hashAlgorithm, signatureAlgorithm, UInt8(signature.count >> 8), UInt8(signature.count & 0xFF)] + signature
        return bytes
    }

    /// The `digitally-signed` struct of RFC 6962 §3.2 that an SCT's signature covers for a precertificate entry:
    /// sct_version, signature_type certificate_timestamp, the timestamp, entry_type precert_entry, the issuer key hash
    /// (SHA-256 of the issuer's SubjectPublicKeyInfo), the TBSCertificate without the SCT list (`uint24` length), and
    /// the SCT's extensions (`uint16` length).
    public static func signedData(version: UInt8 = 0, timestampMilliseconds: UInt64, issuerKeyHash: [UInt8], tbs: [UInt8], extensions: [UInt8] = []) -> [UInt8]
    {
        var data: [UInt8] = [version, 0]
        data += bigEndian(timestampMilliseconds)
        data += [0, 1] + issuerKeyHash
        data += [UInt8(truncatingIfNeeded: tbs.count >> 16), UInt8(truncatingIfNeeded: tbs.count >> 8), UInt8(truncatingIfNeeded: tbs.count)] + tbs
        data += [UInt8(truncatingIfNeeded: extensions.count >> 8), UInt8(truncatingIfNeeded: extensions.count)] + extensions
        return data
    }

    /// `value` as 8 big-endian octets (a TLS `uint64`).
    static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// The SCT list extension's value (an OCTET STRING holding the TLS-encoded list) for `scts`.
    public static func listExtensionValue(_ scts: [SignedCertificateTimestamp]) throws -> [UInt8] {
        var list: [UInt8] = []
        for sct in scts {
            let item = sct.serialized()
            list += [UInt8(item.count >> 8), UInt8(item.count & 0xFF)] + item
        }
        let whole = [UInt8(list.count >> 8), UInt8(list.count & 0xFF)] + list
        var serializer = DER.Serializer()
        try serializer.serialize(ASN1OctetString(contentBytes: whole[...]))
        return serializer.serializedBytes
    }
}

/// Reads TLS presentation-language encodings (RFC 8446 §3): big-endian integers and length-prefixed vectors.
struct TLSReader {
    private var bytes: ArraySlice<UInt8>
    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }
    var isAtEnd: Bool { bytes.isEmpty }

    mutating func byte(what: String) throws(SignedCertificateTimestamp.ParseError) -> UInt8 {
        guard let first = bytes.first else { throw .init("truncated: \(what) is missing") }
        bytes = bytes.dropFirst()
        return first
    }

    mutating func bytes(_ count: Int, what: String) throws(SignedCertificateTimestamp.ParseError) -> ArraySlice<UInt8> {
        guard bytes.count >= count else { throw .init("truncated: \(what) needs \(count) bytes, \(bytes.count) left") }
        let taken = bytes.prefix(count)
        bytes = bytes.dropFirst(count)
        return taken
    }

    mutating func integer(_ count: Int, what: String) throws(SignedCertificateTimestamp.ParseError) -> UInt64 {
        try bytes(count, what: what).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func vector(lengthBytes: Int, what: String) throws(SignedCertificateTimestamp.ParseError) -> ArraySlice<UInt8> {
        let length = try integer(lengthBytes, what: "the length of \(what)")
        return try bytes(Int(length), what: what)
    }
}

import SwiftASN1
import X509

extension Certificate {
    /// The signature algorithm under OpenSSL's name for it (`openssl x509 -text` prints the same:
    /// `ecdsa-with-SHA256`, `sha256WithRSAEncryption`, `ED25519`), so that output can be compared with
    /// OpenSSL's and searched for the names people know. An algorithm OpenSSL has no name for is
    /// printed as its dotted OID, as OpenSSL does.
    package var openSSLSignatureAlgorithmName: String {
        if let name = Self.openSSLNames[signatureAlgorithm] { return name }
        if let oid = RawCertificate(der: derBytes)?.signatureAlgorithmOID {
            return RawCertificate.weakSignatureAlgorithms[oid] ?? Self.openSSLOIDNames[oid] ?? oid.description
        }
        return "unknown"
    }

    /// The serial number as `openssl x509 -serial` prints it: the magnitude's bytes in upper-case hex,
    /// two digits each, no separators (a DER sign octet is not part of the number; zero is `00`).
    package var openSSLSerial: String {
        var bytes = ArraySlice(serialNumber.bytes)
        while bytes.count > 1, bytes.first == 0 { bytes = bytes.dropFirst() }
        if bytes.isEmpty { return "00" }
        let digits: [UInt8] = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// OpenSSL's long names (crypto/objects/objects.txt) for the algorithms swift-certificates knows.
    private static let openSSLNames: [Certificate.SignatureAlgorithm: String] = [
        .sha1WithRSAEncryption: "sha1WithRSAEncryption",
        .sha256WithRSAEncryption: "sha256WithRSAEncryption",
        .sha384WithRSAEncryption: "sha384WithRSAEncryption",
        .sha512WithRSAEncryption: "sha512WithRSAEncryption",
        .ecdsaWithSHA256: "ecdsa-with-SHA256",
        .ecdsaWithSHA384: "ecdsa-with-SHA384",
        .ecdsaWithSHA512: "ecdsa-with-SHA512",
        .ed25519: "ED25519",
    ]

    /// OpenSSL's names for algorithms swift-certificates does not model, read from the DER.
    private static let openSSLOIDNames: [ASN1ObjectIdentifier: String] = [
        [1, 2, 840, 113549, 1, 1, 10]: "rsassaPss",
        [1, 2, 840, 113549, 1, 1, 14]: "sha224WithRSAEncryption",
        [1, 2, 840, 10045, 4, 3, 1]: "ecdsa-with-SHA224",
        [1, 3, 101, 113]: "ED448",
        [2, 16, 840, 1, 101, 3, 4, 3, 2]: "dsa_with_SHA256",
    ]
}

import SwiftASN1

/// The two PEM forms of an Ed25519 key that RFC 8410 defines, each a fixed DER prefix — the structure around
/// AlgorithmIdentifier id-Ed25519 (1.3.101.112), which has no parameters — followed by the key's 32 bytes:
/// a `PUBLIC KEY` (SubjectPublicKeyInfo, §4) and a `PRIVATE KEY` (PKCS#8 OneAsymmetricKey, §7).
///
/// Hand-written, not a DER parser: with no parameters and no optional fields, each form has exactly one DER
/// encoding, so a key is accepted only as those exact bytes and anything else is refused.
struct Ed25519KeyPEM: Sendable {
    /// The PEM label (`PUBLIC KEY`, `PRIVATE KEY`).
    let label: String
    /// The DER bytes before the key's 32.
    let prefix: [UInt8]
    /// RFC 8410's section for the form, for messages.
    let section: String

    /// SEQUENCE { SEQUENCE { OID 1.3.101.112 }, BIT STRING (32 bytes) } (RFC 8410 §4).
    static let publicKey = Ed25519KeyPEM(
        label: "PUBLIC KEY", prefix: [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00], section: "RFC 8410 §4")

    /// SEQUENCE { INTEGER 0, SEQUENCE { OID 1.3.101.112 }, OCTET STRING { OCTET STRING (32 bytes) } } (RFC 8410 §7).
    static let privateKey = Ed25519KeyPEM(
        label: "PRIVATE KEY", prefix: [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20],
        section: "RFC 8410 §7")

    /// The key's 32 bytes from a PEM block of this form, or why not.
    func keyBytes(_ text: String) throws(TrustConfigurationKeyError) -> ArraySlice<UInt8> {
        let document: PEMDocument
        do {
            document = try PEMDocument(pemString: text)
        } catch {
            throw TrustConfigurationKeyError("not a PEM block")
        }
        guard document.discriminator == label else {
            throw TrustConfigurationKeyError("a PEM \(DisplayText.escaped(document.discriminator)) block, not a \(label)")
        }
        let der = document.derBytes
        guard der.count == prefix.count + 32, der.starts(with: prefix) else {
            throw TrustConfigurationKeyError("the \(label) is not an Ed25519 key (\(section))")
        }
        return der.dropFirst(prefix.count)
    }

    /// `key`'s 32 bytes as a PEM block of this form, with a final line end.
    func pem(_ key: some Collection<UInt8>) -> String {
        PEMDocument(type: label, derBytes: prefix + Array(key)).pemString + "\n"
    }
}

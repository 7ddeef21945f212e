import Crypto
import Foundation
import SwiftASN1

/// An Ed25519 private key (RFC 8032) that signs trust-configuration bundles (`trust config sign`); its
/// ``publicKey`` is what applications pin. Kept by whoever publishes configurations, never by the application.
///
/// Read from a PEM `PRIVATE KEY` (PKCS#8, RFC 8410 §7 — what `openssl genpkey -algorithm ed25519` and
/// `trust config keygen` write) or the raw 32-byte seed. Its description and reflection show the public key's
/// ``TrustConfigurationPublicKey/id`` only: the key's bytes never reach a message, a log or a dump.
public struct TrustConfigurationSigningKey: Sendable, CustomStringConvertible, CustomReflectable {
    private let key: Curve25519.Signing.PrivateKey

    /// The DER prefix of an Ed25519 PKCS#8 PrivateKeyInfo: SEQUENCE { INTEGER 0, SEQUENCE { OID 1.3.101.112 },
    /// OCTET STRING { OCTET STRING (32 bytes) } } (RFC 8410 §7); the 32-byte seed follows.
    static let pkcs8Prefix: [UInt8] = [
        0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
    ]

    /// A new random key.
    public init() {
        key = Curve25519.Signing.PrivateKey()
    }

    /// The key whose 32-byte seed this is.
    public init(rawRepresentation bytes: some Collection<UInt8>) throws(TrustConfigurationKeyError) {
        let raw = Array(bytes)
        guard raw.count == 32 else { throw TrustConfigurationKeyError("an Ed25519 private key is 32 bytes, not \(raw.count)") }
        do {
            key = try Curve25519.Signing.PrivateKey(rawRepresentation: raw)
        } catch {
            throw TrustConfigurationKeyError("not an Ed25519 private key")
        }
    }

    /// The key a file holds: a PEM `PRIVATE KEY` block (PKCS#8, RFC 8410 §7) or the 32-byte seed.
    public init(parsing bytes: [UInt8]) throws(TrustConfigurationKeyError) {
        if bytes.count == 32 {
            try self.init(rawRepresentation: bytes)
            return
        }
        guard let text = StrictUTF8.string(bytes), text.contains("-----BEGIN") else {
            throw TrustConfigurationKeyError("neither a PEM PRIVATE KEY nor a 32-byte Ed25519 seed (\(bytes.count) bytes)")
        }
        let document: PEMDocument
        do {
            document = try PEMDocument(pemString: text)
        } catch {
            throw TrustConfigurationKeyError("not a PEM block")
        }
        guard document.discriminator == "PRIVATE KEY" else {
            throw TrustConfigurationKeyError("a PEM \(DisplayText.escaped(document.discriminator)) block, not a PKCS#8 PRIVATE KEY")
        }
        let der = document.derBytes
        guard der.count == Self.pkcs8Prefix.count + 32, der.starts(with: Self.pkcs8Prefix) else {
            throw TrustConfigurationKeyError("the PRIVATE KEY is not an Ed25519 key (RFC 8410 §7)")
        }
        try self.init(rawRepresentation: der.dropFirst(Self.pkcs8Prefix.count))
    }

    /// The public key to pin.
    public var publicKey: TrustConfigurationPublicKey { TrustConfigurationPublicKey(key: key.publicKey) }

    /// The key as a PEM `PRIVATE KEY` block (PKCS#8, RFC 8410 §7), with a final line end. For a file created
    /// private (0600) from its first byte.
    public var pemRepresentation: String {
        PEMDocument(type: "PRIVATE KEY", derBytes: Self.pkcs8Prefix + Array(key.rawRepresentation)).pemString + "\n"
    }

    /// The Ed25519 signature of exactly `message` (RFC 8032 §5.1.6): 64 bytes.
    public func signature(for message: some Collection<UInt8>) throws(TrustConfigurationKeyError) -> [UInt8] {
        do {
            return Array(try key.signature(for: Data(message)))
        } catch {
            throw TrustConfigurationKeyError("signing failed")
        }
    }

    /// `Ed25519 signing key for ed25519:…` (its public key's id).
    public var description: String { "Ed25519 signing key for \(publicKey.id)" }

    /// Shows only ``description``.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

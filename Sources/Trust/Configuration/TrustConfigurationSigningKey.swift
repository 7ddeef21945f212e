import Crypto
import SwiftASN1

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An Ed25519 private key (RFC 8032) that signs trust-configuration bundles (`trust config sign`); its
/// ``publicKey`` is what applications pin. Kept by whoever publishes configurations, never by the application.
///
/// Read from a PEM `PRIVATE KEY` (PKCS#8, RFC 8410 §7 — what `openssl genpkey -algorithm ed25519` and
/// `trust config keygen` write) or the raw 32-byte seed. Its description and reflection show the public key's
/// ``TrustConfigurationPublicKey/id`` only: the key's bytes never reach a message, a log or a dump.
public struct TrustConfigurationSigningKey: Sendable, CustomStringConvertible, CustomReflectable {
    private let key: Curve25519.Signing.PrivateKey

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
        try self.init(rawRepresentation: Ed25519KeyPEM.privateKey.keyBytes(text))
    }

    /// The public key to pin.
    public var publicKey: TrustConfigurationPublicKey { TrustConfigurationPublicKey(key: key.publicKey) }

    /// The key as a PEM `PRIVATE KEY` block (PKCS#8, RFC 8410 §7), with a final line end. For a file created
    /// private (0600) from its first byte.
    public var pemRepresentation: String {
        Ed25519KeyPEM.privateKey.pem(key.rawRepresentation)
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

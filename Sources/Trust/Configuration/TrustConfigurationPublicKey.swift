import Crypto
import SwiftASN1

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An Ed25519 public key (RFC 8032) that a signed trust-configuration bundle must verify with: the key an
/// application pins in its code to accept configuration updates (``SignedTrustConfiguration``).
///
/// Read from the forms tools write: a PEM `PUBLIC KEY` (SubjectPublicKeyInfo, RFC 8410 §4 — what
/// `openssl pkey -pubout` and `trust config keygen` write), the raw 32 bytes, or those bytes in base64 (44
/// characters, the form to paste into code).
public struct TrustConfigurationPublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The key's 32 bytes (RFC 8032 §5.1.5).
    public let rawRepresentation: [UInt8]
    let key: Curve25519.Signing.PublicKey

    /// A key made by swift-crypto.
    init(key: Curve25519.Signing.PublicKey) {
        self.key = key
        rawRepresentation = Array(key.rawRepresentation)
    }

    /// The key whose 32 bytes these are.
    public init(rawRepresentation bytes: some Collection<UInt8>) throws(TrustConfigurationKeyError) {
        let raw = Array(bytes)
        guard raw.count == 32 else { throw TrustConfigurationKeyError("an Ed25519 public key is 32 bytes, not \(raw.count)") }
        do {
            key = try Curve25519.Signing.PublicKey(rawRepresentation: raw)
        } catch {
            throw TrustConfigurationKeyError("not an Ed25519 public key")
        }
        rawRepresentation = raw
    }

    /// The key whose 32 bytes `text` holds in base64 (as ``base64`` writes them).
    public init(base64 text: String) throws(TrustConfigurationKeyError) {
        guard let bytes = Data(base64Encoded: text.trimmingASCIIWhitespace()) else {
            throw TrustConfigurationKeyError("not base64")
        }
        try self.init(rawRepresentation: bytes)
    }

    /// The key in a PEM `PUBLIC KEY` block (an Ed25519 SubjectPublicKeyInfo, RFC 8410 §4).
    public init(pemEncoded text: String) throws(TrustConfigurationKeyError) {
        try self.init(rawRepresentation: Ed25519KeyPEM.publicKey.keyBytes(text))
    }

    /// The key a file holds: PEM, base64 of the 32 bytes (one line), or the 32 bytes themselves.
    public init(parsing bytes: [UInt8]) throws(TrustConfigurationKeyError) {
        if bytes.count == 32 {
            try self.init(rawRepresentation: bytes)
            return
        }
        guard let text = StrictUTF8.string(bytes) else {
            throw TrustConfigurationKeyError("neither PEM, base64 nor 32 raw bytes (\(bytes.count) bytes)")
        }
        if text.contains("-----BEGIN") {
            try self.init(pemEncoded: text)
        } else {
            try self.init(base64: text)
        }
    }

    /// The 32 bytes in base64 (44 characters).
    public var base64: String { Data(rawRepresentation).base64EncodedString() }

    /// The key as a PEM `PUBLIC KEY` block (RFC 8410 §4), with a final line end.
    public var pemRepresentation: String {
        Ed25519KeyPEM.publicKey.pem(rawRepresentation)
    }

    /// A short name for the key in messages and logs: `ed25519:` and the first 8 bytes of its SHA-256, in hex.
    public var id: String {
        "ed25519:" + SHA256.hash(data: rawRepresentation).prefix(8).hexText()
    }

    /// ``id``.
    public var description: String { id }

    /// Whether `signature` is this key's Ed25519 signature of exactly `message` (RFC 8032 §5.1.7).
    package func isValidSignature(_ signature: some Collection<UInt8>, for message: some Collection<UInt8>) -> Bool {
        key.isValidSignature(Data(signature), for: Data(message))
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawRepresentation == rhs.rawRepresentation }

    public func hash(into hasher: inout Hasher) { hasher.combine(rawRepresentation) }
}

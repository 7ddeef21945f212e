import Crypto
import X509
import _CryptoExtras

/// Key types the lab can generate.
public enum LabKeyType: String, Sendable, CaseIterable, Codable {
    case rsa2048, rsa3072, rsa4096, p256, p384, p521, ed25519

    /// A fresh private key of this type.
    public func generate() throws -> Certificate.PrivateKey {
        switch self {
        case .rsa2048: return Certificate.PrivateKey(try _RSA.Signing.PrivateKey(keySize: .bits2048))
        case .rsa3072: return Certificate.PrivateKey(try _RSA.Signing.PrivateKey(keySize: .bits3072))
        case .rsa4096: return Certificate.PrivateKey(try _RSA.Signing.PrivateKey(keySize: .bits4096))
        case .p256: return Certificate.PrivateKey(P256.Signing.PrivateKey())
        case .p384: return Certificate.PrivateKey(P384.Signing.PrivateKey())
        case .p521: return Certificate.PrivateKey(P521.Signing.PrivateKey())
        case .ed25519: return Certificate.PrivateKey(Curve25519.Signing.PrivateKey())
        }
    }

    /// The signature algorithm a CA with this key signs with.
    var signatureAlgorithm: Certificate.SignatureAlgorithm {
        switch self {
        case .rsa2048, .rsa3072, .rsa4096: return .sha256WithRSAEncryption
        case .p256: return .ecdsaWithSHA256
        case .p384: return .ecdsaWithSHA384
        case .p521: return .ecdsaWithSHA512
        case .ed25519: return .ed25519
        }
    }
}

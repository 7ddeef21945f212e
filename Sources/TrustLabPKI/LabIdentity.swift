import SwiftASN1
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A certificate with its private key, as the lab issued it.
public struct LabIdentity: Sendable {
    /// The certificate.
    public let certificate: Certificate
    /// The certificate's private key.
    public let privateKey: Certificate.PrivateKey
    /// The type of the private key.
    public let keyType: LabKeyType
    /// The certificates above this one up to (not including) the root, nearest first.
    public let intermediates: [Certificate]

    /// An identity from its parts.
    public init(certificate: Certificate, privateKey: Certificate.PrivateKey, keyType: LabKeyType, intermediates: [Certificate] = []) {
        self.certificate = certificate
        self.privateKey = privateKey
        self.keyType = keyType
        self.intermediates = intermediates
    }

    /// What a server presents: this certificate, then its intermediates.
    public var chain: [Certificate] { [certificate] + intermediates }

    /// The certificate as PEM.
    public var certificatePEM: String { Self.pem(certificate) }

    /// The presented chain as PEM, leaf first.
    public var chainPEM: String { chain.map(Self.pem).joined() }

    /// The private key as PEM (PKCS#8 for most types).
    public var privateKeyPEM: String {
        (try? privateKey.serializeAsPEM().pemString).map { $0 + "\n" } ?? ""
    }

    static func pem(_ certificate: Certificate) -> String { certificate.pemString }
}

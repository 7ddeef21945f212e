import X509

/// Every key on the path meets the minimums: RSA ≥ 2048 bits (a whole number of bytes) and
/// ECDSA ≥ 256 bits by default.
package struct KeyStrengthRule: PathRule {
    /// The smallest RSA modulus accepted, in bits.
    package var minimumRSABits: Int
    /// The smallest EC key accepted, in bits.
    package var minimumECBits: Int

    /// Creates the rule with the given minimums.
    package init(minimumRSABits: Int = 2048, minimumECBits: Int = 256) {
        self.minimumRSABits = minimumRSABits
        self.minimumECBits = minimumECBits
    }

    /// The reasons `path` fails this rule; empty when it passes.
    package func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        var reasons: [TrustFailureReason] = []
        for (certificate, facts) in zip(path.certificates, path.facts) {
            let key = facts.publicKey
            switch key {
            case .rsa(let bits) where bits % 8 != 0:
                reasons.append(.weakKey(subject: certificate.displayName, key: key.description, minimum: "an RSA modulus of whole bytes (CA/B Forum)"))
            case .rsa(let bits) where bits < minimumRSABits:
                reasons.append(.weakKey(subject: certificate.displayName, key: key.description, minimum: "RSA \(minimumRSABits)"))
            case .ecdsa(_, let bits) where bits < minimumECBits:
                reasons.append(.weakKey(subject: certificate.displayName, key: key.description, minimum: "EC \(minimumECBits)"))
            case .other:
                reasons.append(.weakKey(subject: certificate.displayName, key: key.description, minimum: "a supported key type"))
            default:
                break
            }
        }
        return reasons
    }
}

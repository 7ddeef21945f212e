import X509

/// Signatures on the path must use an accepted algorithm: RSA PKCS#1 v1.5 or ECDSA with
/// SHA-256/384/512, or Ed25519. SHA-1 and MD5 are refused by default. The anchor's own
/// signature is not judged — an anchor is trusted for its key, not its self-signature.
package struct SignatureAlgorithmRule: PathRule {
    /// Whether sha1WithRSAEncryption signatures are accepted.
    package var allowsSHA1: Bool

    /// Creates the rule; SHA-1 is refused unless `allowsSHA1`.
    package init(allowsSHA1: Bool = false) {
        self.allowsSHA1 = allowsSHA1
    }

    static let strong: Set<Certificate.SignatureAlgorithm> = [
        .sha256WithRSAEncryption, .sha384WithRSAEncryption, .sha512WithRSAEncryption,
        .ecdsaWithSHA256, .ecdsaWithSHA384, .ecdsaWithSHA512, .ed25519,
    ]

    /// The reasons `path` fails this rule; empty when it passes.
    package func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        var reasons: [TrustFailureReason] = []
        for (index, certificate) in path.certificates.enumerated() where !path.isAnchor(index) {
            let algorithm = certificate.signatureAlgorithm
            if Self.strong.contains(algorithm) { continue }
            if allowsSHA1 && algorithm == .sha1WithRSAEncryption { continue }
            reasons.append(.weakSignatureAlgorithm(subject: certificate.displayName, algorithm: certificate.openSSLSignatureAlgorithmName))
        }
        return reasons
    }
}

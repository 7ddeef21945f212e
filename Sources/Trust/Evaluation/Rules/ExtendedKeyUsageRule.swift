import SwiftASN1
import X509

/// The leaf's extendedKeyUsage must allow the purpose (serverAuth for a TLS server,
/// clientAuth for a client), and no CA on the path may restrict its EKU to purposes that
/// exclude it (the de-facto EKU chaining that browsers and OpenSSL enforce).
package struct ExtendedKeyUsageRule: PathRule {
    /// The required purpose; `nil` accepts any EKU (basic X.509), while still processing a critical EKU.
    package var purpose: ExtendedKeyUsage.Usage?
    /// Whether a leaf *without* an EKU extension is refused (CA/B Forum: it must carry one).
    package var requiresExtensionInLeaf: Bool
    /// Whether `anyExtendedKeyUsage` in the leaf satisfies the purpose (CA/B Forum: it must not).
    package var acceptsAnyUsageInLeaf: Bool

    /// Creates the rule; by default the purpose is serverAuth.
    package init(purpose: ExtendedKeyUsage.Usage? = .serverAuth, requiresExtensionInLeaf: Bool = false, acceptsAnyUsageInLeaf: Bool = false) {
        self.purpose = purpose
        self.requiresExtensionInLeaf = requiresExtensionInLeaf
        self.acceptsAnyUsageInLeaf = acceptsAnyUsageInLeaf
    }

    /// This rule enforces extendedKeyUsage.
    package var handledCriticalExtensions: [ASN1ObjectIdentifier] { [.X509ExtensionID.extendedKeyUsage] }

    /// The reasons `path` fails this rule; empty when it passes.
    package func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        guard let purpose else { return [] }
        var reasons: [TrustFailureReason] = []
        let required = purpose.description
        for (index, facts) in path.facts.enumerated() {
            var certificate: Certificate { path.certificates[index] }
            let usages: ExtendedKeyUsage?
            do {
                usages = try facts.extendedKeyUsage.get()
            } catch {
                reasons.append(.malformedCertificate(subject: certificate.displayName, detail: "extendedKeyUsage: \(error)"))
                continue
            }
            if index == 0 {
                guard let usages else {
                    if requiresExtensionInLeaf && !(path.count == 1 && path.endsAtAnchor) {
                        reasons.append(.missingExtendedKeyUsage(subject: certificate.displayName, required: required))
                    }
                    continue
                }
                if !(usages.contains(purpose) || (acceptsAnyUsageInLeaf && usages.contains(.any))) {
                    reasons.append(.missingExtendedKeyUsage(subject: certificate.displayName, required: required))
                } else if usages.contains(.any) && !acceptsAnyUsageInLeaf && !(path.count == 1 && path.endsAtAnchor) {
                    reasons.append(
                        .malformedCertificate(
                            subject: certificate.displayName,
                            detail: "a server or client certificate may not assert anyExtendedKeyUsage (CA/B Forum 7.1.2.7.10)"))
                }
            } else if let usages, !usages.contains(purpose), !usages.contains(.any) {
                reasons.append(.extendedKeyUsageExcludedByIssuer(subject: certificate.displayName, required: required))
            }
        }
        return reasons
    }
}

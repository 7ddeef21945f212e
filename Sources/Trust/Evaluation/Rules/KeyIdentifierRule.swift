import SwiftASN1
import X509

/// RFC 5280 §4.2.1.1–2 and CA/B Forum §7.1.2: certificates that were issued by another
/// certificate carry an authorityKeyIdentifier with a keyIdentifier; CA certificates carry a
/// subjectKeyIdentifier; a self-signed root's authorityKeyIdentifier, if present, holds a
/// keyIdentifier equal to its own subjectKeyIdentifier. (An authorityCertIssuer/serial beside
/// it is tolerated: OpenSSL's default configuration writes one, e.g. badssl.com's root.)
package struct KeyIdentifierRule: PathRule {
    /// Creates the rule.
    package init() {}

    /// The reasons `path` fails this rule; empty when it passes.
    package func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        if path.count == 1 && path.endsAtAnchor { return [] }
        var reasons: [TrustFailureReason] = []
        for (index, facts) in path.facts.enumerated() {
            var name: String { path.certificates[index].displayName }
            if case .failure(let error) = facts.authorityKeyIdentifier {
                reasons.append(.malformedCertificate(subject: name, detail: "key identifier extension: \(error)"))
                continue
            }
            if case .failure(let error) = facts.subjectKeyIdentifier {
                reasons.append(.malformedCertificate(subject: name, detail: "key identifier extension: \(error)"))
                continue
            }
            if path.isAnchor(index) {
                if index > 0, let problem = facts.selfIssuedKeyIdentifierProblem {
                    reasons.append(.malformedCertificate(subject: name, detail: problem))
                }
            } else if !facts.hasAuthorityKeyIdentifierKeyID {
                reasons.append(.malformedCertificate(subject: name, detail: "no authorityKeyIdentifier keyIdentifier"))
            }
            if index > 0 && !facts.hasSubjectKeyIdentifier {
                reasons.append(.malformedCertificate(subject: name, detail: "a CA certificate without a subjectKeyIdentifier"))
            }
        }
        return reasons
    }
}

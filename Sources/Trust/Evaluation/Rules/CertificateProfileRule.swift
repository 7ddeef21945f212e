import SwiftASN1
import X509

/// Structural requirements of RFC 5280 and the CA/B Forum profile that a lenient parser lets
/// through, each a sign of a certificate nobody should rely on:
/// - serial numbers are non-zero and at most 20 octets (§4.1.2.2);
/// - a CA has a non-empty subject and a *critical* basicConstraints extension (§4.1.2.6, §4.2.1.9);
/// - the leaf's subjectAltName is critical exactly when its subject is empty (§4.2.1.6);
/// - an authorityInformationAccess extension is well formed and not empty;
/// - a CA's policyConstraints extension is critical (§4.2.1.11);
/// - the leaf's extendedKeyUsage is not critical (CA/B Forum 7.1.2.7).
package struct CertificateProfileRule: PathRule {
    /// Creates the rule.
    package init() {}

    /// The reasons `path` fails this rule; empty when it passes.
    package func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        var reasons: [TrustFailureReason] = []
        let anchorOnly = path.count == 1 && path.endsAtAnchor
        for (index, facts) in path.facts.enumerated() {
            var name: String { path.certificates[index].displayName }
            if !path.isAnchor(index) || anchorOnly {
                if let problem = facts.serialNumberProblem {
                    reasons.append(.malformedCertificate(subject: name, detail: problem))
                }
                if facts.hasMalformedAuthorityInformationAccess {
                    reasons.append(.malformedCertificate(subject: name, detail: "a malformed authorityInformationAccess extension"))
                }
            }
            if index > 0 {
                if facts.hasEmptySubject {
                    reasons.append(.malformedCertificate(subject: name, detail: "a CA certificate with an empty subject"))
                }
                if facts.basicConstraintsIsCritical == false {
                    reasons.append(.malformedCertificate(subject: name, detail: "a CA certificate whose basicConstraints is not critical"))
                }
                if facts.policyConstraintsIsCritical == false {
                    reasons.append(.malformedCertificate(subject: name, detail: "a CA certificate whose policyConstraints is not critical"))
                }
            }
        }
        guard !anchorOnly else { return reasons }
        let leaf = path.facts[0]
        if leaf.extendedKeyUsageIsCritical == true {
            reasons.append(.malformedCertificate(subject: path.leaf.displayName, detail: "the extendedKeyUsage of an end-entity certificate is critical"))
        }
        if let critical = leaf.subjectAlternativeNameIsCritical {
            if leaf.hasEmptySubject && !critical {
                reasons.append(.malformedCertificate(subject: path.leaf.displayName, detail: "the subject is empty but the subjectAltName is not critical"))
            } else if !leaf.hasEmptySubject && critical {
                reasons.append(
                    .malformedCertificate(subject: path.leaf.displayName, detail: "the subjectAltName is critical although the subject is not empty"))
            }
        }
        return reasons
    }
}

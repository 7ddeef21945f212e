import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Every certificate on the path must be valid at the evaluation time.
///
/// Validity dates are encoded to the second, so the evaluation time is compared at that
/// granularity by *truncation*: `notBefore <= floor(time) <= notAfter`. A certificate is thus
/// not valid one millisecond before its `notBefore`, and stays valid through the last second
/// named by `notAfter`. (swift-certificates' own check rounds to the *nearest* second, which
/// accepts a certificate up to half a second before it is valid.)
package struct ValidityRule: PathRule {
    /// Whether the anchor's own validity is checked too (it is, by default: an expired root
    /// is a sign of a stale trust store, not something to ignore silently).
    package var checksAnchor: Bool

    /// Creates the rule; `checksAnchor` also checks the anchor's dates.
    package init(checksAnchor: Bool = true) {
        self.checksAnchor = checksAnchor
    }

    /// The reasons `path` fails this rule; empty when it passes.
    package func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        var reasons: [TrustFailureReason] = []
        let time = context.evaluationTime
        let truncated = Date(timeIntervalSince1970: (time.timeIntervalSince1970).rounded(.down))
        for (index, facts) in path.facts.enumerated() {
            if path.isAnchor(index) && !checksAnchor && index > 0 { continue }
            if truncated < facts.notValidBefore {
                reasons.append(.notYetValid(subject: path.certificates[index].displayName, notBefore: facts.notValidBefore, at: time))
            } else if truncated > facts.notValidAfter {
                reasons.append(.expired(subject: path.certificates[index].displayName, notAfter: facts.notValidAfter, at: time))
            }
        }
        return reasons
    }
}

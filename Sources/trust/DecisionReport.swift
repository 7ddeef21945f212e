import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Renders a ``TrustDecision`` for people (text) and scripts (JSON: exact, names as the certificates hold them).
enum DecisionReport {
    /// The text report (``DecisionText/report(_:)``: every name a certificate chose escaped).
    static func text(_ decision: TrustDecision) -> String { DecisionText.report(decision) }

    struct JSONDecision: Encodable {
        struct Reason: Encodable {
            var code: String
            var message: String
        }
        var trusted: Bool
        var policy: String
        var peerName: String?
        var evaluationTime: String
        var reasons: [Reason]
        var notes: [String]
        var expectedPins: [String]
        var pinsSeen: [String]
        var validatedPath: [CertificateSummary]
        var closestPath: [CertificateSummary]
        var presentedChain: [CertificateSummary]
    }

    static func json(_ decision: TrustDecision) -> String {
        let value = JSONDecision(
            trusted: decision.isTrusted, policy: decision.policy.description, peerName: decision.peerName?.description,
            evaluationTime: RFC3339.string(decision.evaluationTime),
            reasons: decision.reasons.map { .init(code: $0.code, message: $0.description) }, notes: decision.notes,
            expectedPins: decision.expectedPins.map(\.description), pinsSeen: decision.pinsSeen.map(\.description),
            validatedPath: decision.validatedPath.map(CertificateSummary.init),
            closestPath: decision.closestPath.map(CertificateSummary.init),
            presentedChain: decision.presentedChain.map(CertificateSummary.init))
        return (try? JSONOutput.document(value)) ?? "{}\n"
    }
}

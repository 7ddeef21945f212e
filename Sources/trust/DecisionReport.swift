import Foundation
import Trust
import X509

/// Renders a ``TrustDecision`` for people (text) and scripts (JSON).
enum DecisionReport {
    static func text(_ decision: TrustDecision) -> String {
        var out = ""
        out += "decision: \(decision.isTrusted ? "TRUSTED" : "NOT TRUSTED")\n"
        out += "policy: \(decision.policy)\n"
        out += "peer name: \(decision.peerName?.description ?? "(not checked)")\n"
        out += "evaluated at: \(RFC3339.string(decision.evaluationTime))\n"
        if !decision.reasons.isEmpty {
            out += "reasons:\n"
            for reason in decision.reasons { out += "  - [\(reason.code)] \(reason)\n" }
        }
        for note in decision.notes { out += "note: \(note)\n" }
        if !decision.expectedPins.isEmpty {
            out += "expected pins: \(decision.expectedPins.map(\.description).joined(separator: ", "))\n"
        }
        if !decision.validatedPath.isEmpty {
            out += "validated path (leaf → anchor):\n" + list(decision.validatedPath)
        } else if !decision.closestPath.isEmpty {
            out += "closest path examined:\n" + list(decision.closestPath)
        }
        out += "presented chain:\n" + list(decision.presentedChain)
        return out
    }

    static func list(_ certificates: [Certificate]) -> String {
        certificates.enumerated().map { index, certificate in
            let summary = CertificateSummary(certificate)
            var line = "  \(index): \(summary.subject)\n"
            line += "     issuer \(summary.issuer); \(summary.key); valid \(RFC3339.string(summary.notBefore)) … \(RFC3339.string(summary.notAfter))\n"
            if let sans = summary.subjectAlternativeNames { line += "     names: \(sans.joined(separator: ", "))\n" }
            line += "     \(summary.pin)\n"
            return line
        }.joined()
    }

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
            trusted: decision.isTrusted, policy: decision.policy, peerName: decision.peerName?.description,
            evaluationTime: RFC3339.string(decision.evaluationTime),
            reasons: decision.reasons.map { .init(code: $0.code, message: $0.description) }, notes: decision.notes,
            expectedPins: decision.expectedPins.map(\.description), pinsSeen: decision.pinsSeen.map(\.description),
            validatedPath: decision.validatedPath.map(CertificateSummary.init),
            closestPath: decision.closestPath.map(CertificateSummary.init),
            presentedChain: decision.presentedChain.map(CertificateSummary.init))
        return (try? JSONOutput.document(value)) ?? "{}\n"
    }
}

// A rule of an organisation's own, added to the path search: its internal CA issues leaves for at most 90 days on
// paths of at most one intermediate, and a trusted decision should say how long its leaf has left. A rule's refusal
// is `refusedByApplication`, in the rule's own words: the reasons the engine gives have their own kinds.
import Foundation
import Trust
import X509

/// Refuses leaves valid for longer than ``maximumDays`` and paths with more than ``maximumIntermediates``
/// intermediates; notes the days a trusted leaf has left.
public struct ShortLivedLeafRule: PathRule {
    public var maximumDays: Int
    public var maximumIntermediates: Int
    /// Report-only: a lifetime over the limit is noted and let through (while the CA's old leaves age out).
    public var reportsOnly: Bool

    public init(maximumDays: Int = 90, maximumIntermediates: Int = 1, reportsOnly: Bool = false) {
        self.maximumDays = maximumDays
        self.maximumIntermediates = maximumIntermediates
        self.reportsOnly = reportsOnly
    }

    private func lifetimeProblem(_ leaf: Certificate) -> TrustFailureReason? {
        let days = Int(leaf.notValidAfter.timeIntervalSince(leaf.notValidBefore) / 86_400)
        guard days > maximumDays else { return nil }
        return .refusedByApplication("\(leaf.subject) is valid for \(days) days; the internal CA issues at most \(maximumDays)")
    }

    public func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        // A partial path is examined only to explain a refusal: its length says nothing.
        guard path.endsAtAnchor, let leaf = path.certificates.first else { return [] }
        var reasons: [TrustFailureReason] = []
        if !reportsOnly, let problem = lifetimeProblem(leaf) { reasons.append(problem) }
        // The anchor is the last certificate of a complete path, the leaf the first: the rest are intermediates.
        let intermediates = (0..<path.count).filter { $0 > 0 && !path.isAnchor($0) }.count
        if intermediates > maximumIntermediates {
            reasons.append(.refusedByApplication("\(leaf.subject) is \(intermediates) intermediates from its root; at most \(maximumIntermediates)"))
        }
        return reasons
    }

    public var observesTrustedPaths: Bool { true }

    public func observe(_ path: CertificatePath, context: RuleContext) -> PathObservation {
        guard let leaf = path.certificates.first else { return PathObservation() }
        let left = Int(leaf.notValidAfter.timeIntervalSince(context.evaluationTime) / 86_400)
        let host = context.peerName.map { " for \($0)" } ?? ""
        // The note holds while the leaf is valid; the decision may be reused until then.
        var observation = PathObservation(notes: ["leaf\(host) has \(left) days left"], validity: leaf.notValidBefore...leaf.notValidAfter)
        if reportsOnly, let problem = lifetimeProblem(leaf) {
            observation.allowedFailures.append(problem)
            observation.notes.append("report-only: \(problem)")
        }
        if let validity = observation.validity, validity.upperBound < context.evaluationTime { observation.notes.append("leaf expired") }
        return observation
    }
}

/// Trusts a server only if every evaluator does; the decision of the first that refuses is
/// returned (with the later evaluators not run), otherwise the last trusted decision.
public struct CompositeTrustEvaluator: TrustEvaluator {
    /// The evaluators, run in order.
    public let evaluators: [any TrustEvaluator]

    /// Creates a composite of `evaluators`, which must not be empty.
    public init(_ evaluators: [any TrustEvaluator]) throws(TrustConfigurationError) {
        guard !evaluators.isEmpty else { throw .noEvaluators }
        self.evaluators = evaluators
    }

    /// Runs the evaluators in order, stopping at the first refusal.
    public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        var last: TrustDecision?
        for evaluator in evaluators {
            let decision = await evaluator.evaluate(trust)
            if !decision.isTrusted { return decision }
            last = decision
        }
        // `evaluators` is never empty (checked in init).
        return last ?? .refused([.emptyChain], trust: trust, policy: .composite)
    }
}

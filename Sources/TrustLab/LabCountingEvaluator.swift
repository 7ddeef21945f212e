import NIOConcurrencyHelpers
import Trust

/// An evaluator that counts its evaluations and lets another decide: with the evaluation cache off,
/// the count is the number of connections a client opened (every new connection is evaluated).
package final class LabCountingEvaluator: TrustEvaluator {
    /// The evaluator that decides.
    package let inner: any TrustEvaluator
    private let evaluations = NIOLockedValueBox(0)

    /// Counts the evaluations `inner` makes.
    package init(_ inner: any TrustEvaluator) {
        self.inner = inner
    }

    /// Evaluations so far.
    package var count: Int { evaluations.withLockedValue { $0 } }

    /// Counts, then evaluates with `inner`.
    package func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        evaluations.withLockedValue { $0 += 1 }
        return await inner.evaluate(trust)
    }
}

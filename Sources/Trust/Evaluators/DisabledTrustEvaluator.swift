#if DEBUG
    /// Trusts every server, whatever it presents. **Debug builds only**: this type does not exist
    /// in a release build, so no release configuration can reach it (CI checks a release build refuses
    /// what a debug override accepts).
    ///
    /// The decision still carries what the default evaluation would have said, in its notes.
    public struct DisabledTrustEvaluator: TrustEvaluator {
        /// Creates the evaluator.
        public init() {}

        /// Trusts `trust`, noting what the default evaluation would have refused.
        public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
            let wouldBe = await DefaultTrustEvaluator().evaluate(trust)
            var notes = ["trust evaluation is disabled (debug build): the server was not checked"]
            notes += wouldBe.reasons.map { "would have refused: \($0)" }
            return TrustDecision(
                isTrusted: true, reasons: [], notes: notes, presentedChain: trust.presentedChain, validatedPath: [],
                closestPath: wouldBe.closestPath, peerName: trust.peerName, evaluationTime: trust.evaluationTime,
                policy: .disabled)
        }
    }
#endif

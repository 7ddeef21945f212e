import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Raises the server-trust challenge for one connection and turns the handler's answer into a
/// decision. It returns its answer; ``HandshakeChallenges`` keeps it and maps a refusal to its error.
struct ServerTrustChallenge: Sendable {
    /// How the challenge was answered, which picks the error code of a refusal.
    enum Outcome: Sendable, Equatable {
        case defaultHandling
        case accepted
        /// The handler answered `cancelAuthenticationChallenge`: a refusal by the application.
        case cancelled
        case rejected
        case invalidAnswer
        case handlerTimedOut
        /// The request was cancelled (by its caller or its timeout) before the handlers answered: no one
        /// judged the server. The handshake is still refused — never trusted unjudged — but the refusal is
        /// not a trust decision: it is neither recorded nor carried by the request's error.
        case requestCancelled

        /// Whether the answer is a judgement of the server, to record as the handshake's trust decision.
        var isJudgement: Bool { self != .requestCancelled }
    }

    /// The decision the handshake goes by, how the handlers answered, and the default evaluation behind
    /// the decision (nil when none ran: the handler did not answer, or not usably).
    struct Answer: Sendable {
        let decision: TrustDecision
        let outcome: Outcome
        let measured: RouteEvaluation.Measured?
    }

    let origin: Origin
    let taskHandler: (any ChallengeHandler)?
    let sessionHandler: (any ChallengeHandler)?
    let evaluation: RouteEvaluation
    let handlerTimeout: Duration

    /// Asks the handlers (task-level, then session-level) about `trust`, in the calling task (the request's),
    /// and decides by their answer: default handling's decision, or a new decision made by the handler
    /// (`TrustDecision.overridden(by:isTrusted:reasons:notes:policy:)`) that keeps default handling's.
    func decide(_ trust: ServerTrust) async -> Answer {
        let evaluation = self.evaluation
        let challenge = AuthenticationChallenge(
            protectionSpace: ProtectionSpace(host: origin.host, port: origin.port, scheme: origin.scheme, authenticationMethod: .serverTrust),
            serverTrust: trust, defaultEvaluation: { await evaluation.evaluate(trust, afterImmediate: false).decision })
        guard let disposition = await ChallengeChain.ask(task: taskHandler, session: sessionHandler, challenge, timeout: handlerTimeout) else {
            return Task.isCancelled
                ? refusal(trust, .requestCancelled, "the request was cancelled during its server-trust challenge")
                : refusal(trust, .handlerTimedOut, "the challenge handler did not answer within \(handlerTimeout)")
        }
        switch disposition {
        case .performDefaultHandling:
            let measured = await evaluation.evaluate(trust, afterImmediate: false)
            return Answer(decision: measured.decision, outcome: .defaultHandling, measured: measured)
        case .useCredential(let credential):
            guard let credential, case .serverTrust = credential.kind else {
                return refusal(trust, .invalidAnswer, "the challenge handler answered useCredential without a server-trust credential (Credential(trust:))")
            }
            let measured = await evaluation.evaluate(trust, afterImmediate: false)
            let wouldBe = measured.decision
            let accepted = wouldBe.overridden(
                by: .challengeHandler, isTrusted: true,
                notes: ["accepted by the challenge handler"] + wouldBe.reasons.map { "default handling would have refused: \($0)" },
                policy: .challengeHandler(acceptedWithCredential: true))
            return Answer(decision: accepted, outcome: .accepted, measured: measured)
        case .cancelAuthenticationChallenge, .rejectProtectionSpace:
            let cancelled: Bool
            if case .cancelAuthenticationChallenge = disposition { cancelled = true } else { cancelled = false }
            let measured = await evaluation.evaluate(trust, afterImmediate: false)
            let refusal = TrustFailureReason.refusedByApplication(
                cancelled ? "the challenge handler cancelled the server-trust challenge" : "the challenge handler rejected the protection space")
            let refused = measured.decision.overridden(
                by: .challengeHandler, isTrusted: false, reasons: [refusal] + measured.decision.reasons, notes: measured.decision.notes)
            return Answer(decision: refused, outcome: cancelled ? .cancelled : .rejected, measured: measured)
        }
    }

    /// A refusal by the challenge itself (no usable answer): no evaluation ran.
    private func refusal(_ trust: ServerTrust, _ outcome: Outcome, _ why: String) -> Answer {
        Answer(
            decision: .refused([.refusedByApplication(why)], trust: trust, policy: .challengeHandler(acceptedWithCredential: false)), outcome: outcome,
            measured: nil)
    }
}

import Foundation
import Trust

/// Raises the server-trust challenge for one connection and turns the handler's answer into a
/// decision. It returns its answer; ``HandshakeChallenges`` keeps it and maps a refusal to its error.
struct ServerTrustChallenge: Sendable {
    /// How the challenge was answered, which picks the error code of a refusal.
    enum Outcome: Sendable, Equatable {
        case defaultHandling
        case accepted
        case cancelled
        case rejected
        case invalidAnswer
        case handlerTimedOut
    }

    /// The decision the handshake goes by, and how the handlers answered.
    struct Answer: Sendable {
        let decision: TrustDecision
        let outcome: Outcome
    }

    let origin: Origin
    let taskHandler: (any ChallengeHandler)?
    let sessionHandler: (any ChallengeHandler)?
    let evaluate: @Sendable (ServerTrust) async -> TrustDecision
    let handlerTimeout: Duration

    func decide(_ trust: ServerTrust) async -> Answer {
        let evaluate = self.evaluate
        let challenge = AuthenticationChallenge(
            protectionSpace: ProtectionSpace(host: origin.host, port: origin.port, scheme: origin.scheme, authenticationMethod: .serverTrust),
            serverTrust: trust, defaultEvaluation: { await evaluate(trust) })
        guard let disposition = await ChallengeChain.ask(task: taskHandler, session: sessionHandler, challenge, timeout: handlerTimeout) else {
            let refusal = TrustDecision.refused(
                [.refusedByApplication("the challenge handler did not answer within \(handlerTimeout)")], trust: trust, policy: "challenge handler")
            return Answer(decision: refusal, outcome: .handlerTimedOut)
        }
        switch disposition {
        case .performDefaultHandling:
            return Answer(decision: await evaluate(trust), outcome: .defaultHandling)
        case .useCredential(let credential):
            guard let credential, case .serverTrust = credential.kind else {
                let refusal = TrustDecision.refused(
                    [.refusedByApplication("the challenge handler answered useCredential without a server-trust credential (Credential(trust:))")],
                    trust: trust, policy: "challenge handler")
                return Answer(decision: refusal, outcome: .invalidAnswer)
            }
            let wouldBe = await evaluate(trust)
            var accepted = TrustDecision(
                isTrusted: true, reasons: [], presentedChain: trust.presentedChain, validatedPath: wouldBe.validatedPath,
                closestPath: wouldBe.closestPath, peerName: trust.peerName, evaluationTime: trust.evaluationTime,
                policy: "challenge handler (useCredential)", expectedPins: wouldBe.expectedPins)
            accepted.notes = ["accepted by the challenge handler"] + wouldBe.reasons.map { "default handling would have refused: \($0)" }
            return Answer(decision: accepted, outcome: .accepted)
        case .cancelAuthenticationChallenge, .rejectProtectionSpace:
            let cancelled: Bool
            if case .cancelAuthenticationChallenge = disposition { cancelled = true } else { cancelled = false }
            var decision = await evaluate(trust)
            decision.isTrusted = false
            decision.reasons.insert(.refusedByApplication(cancelled ? "the challenge handler cancelled the server-trust challenge" : "the challenge handler rejected the protection space"), at: 0)
            return Answer(decision: decision, outcome: cancelled ? .cancelled : .rejected)
        }
    }
}

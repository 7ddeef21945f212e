import Foundation
import NIOConcurrencyHelpers
import Trust

/// Raises the server-trust challenge for one connection and turns the answer into a decision.
struct ServerTrustChallenge: Sendable {
    /// How the challenge was answered, to pick the right error code.
    enum Outcome: Sendable, Equatable {
        case defaultHandling
        case accepted
        case cancelled
        case rejected
        case invalidAnswer
        case handlerTimedOut
    }

    let origin: Origin
    let taskHandler: (any ChallengeHandler)?
    let sessionHandler: (any ChallengeHandler)?
    let evaluate: @Sendable (ServerTrust) async -> TrustDecision
    let handlerTimeout: Duration
    let outcome = NIOLockedValueBox<Outcome?>(nil)

    func decide(_ trust: ServerTrust) async -> TrustDecision {
        let evaluate = self.evaluate
        let challenge = AuthenticationChallenge(
            protectionSpace: ProtectionSpace(host: origin.host, port: origin.port, scheme: origin.scheme, authenticationMethod: .serverTrust),
            serverTrust: trust, defaultEvaluation: { await evaluate(trust) })
        guard let disposition = await ChallengeChain.ask(task: taskHandler, session: sessionHandler, challenge, timeout: handlerTimeout) else {
            outcome.withLockedValue { $0 = .handlerTimedOut }
            return .refused([.refusedByApplication("the challenge handler did not answer within \(handlerTimeout)")], trust: trust, policy: "challenge handler")
        }
        switch disposition {
        case .performDefaultHandling:
            outcome.withLockedValue { $0 = .defaultHandling }
            return await evaluate(trust)
        case .useCredential(let credential):
            guard let credential, case .serverTrust = credential.kind else {
                outcome.withLockedValue { $0 = .invalidAnswer }
                return .refused([.refusedByApplication("the challenge handler answered useCredential without a server-trust credential (Credential(trust:))")], trust: trust, policy: "challenge handler")
            }
            outcome.withLockedValue { $0 = .accepted }
            let wouldBe = await evaluate(trust)
            var accepted = TrustDecision(
                isTrusted: true, reasons: [], presentedChain: trust.presentedChain, validatedPath: wouldBe.validatedPath,
                closestPath: wouldBe.closestPath, peerName: trust.peerName, evaluationTime: trust.evaluationTime,
                policy: "challenge handler (useCredential)", expectedPins: wouldBe.expectedPins)
            accepted.notes = ["accepted by the challenge handler"] + wouldBe.reasons.map { "default handling would have refused: \($0)" }
            return accepted
        case .cancelAuthenticationChallenge, .rejectProtectionSpace:
            let cancelled: Bool
            if case .cancelAuthenticationChallenge = disposition { cancelled = true } else { cancelled = false }
            outcome.withLockedValue { $0 = cancelled ? .cancelled : .rejected }
            var decision = await evaluate(trust)
            decision.isTrusted = false
            decision.reasons.insert(.refusedByApplication(cancelled ? "the challenge handler cancelled the server-trust challenge" : "the challenge handler rejected the protection space"), at: 0)
            return decision
        }
    }

    /// The error for a refused handshake, by how the challenge was answered.
    func error(for decision: TrustDecision, url: URL) -> SessionError {
        switch outcome.withLockedValue({ $0 }) {
        case .cancelled?:
            return SessionError(.cancelled, "the server-trust challenge for \(origin) was cancelled", url: url, trustDecision: decision)
        case .handlerTimedOut?:
            return SessionError(.timedOut, "the challenge handler did not answer the server-trust challenge for \(origin)", url: url, trustDecision: decision)
        case .rejected?:
            return SessionError(.serverCertificateUntrusted, "the challenge handler rejected the server \(origin)", url: url, trustDecision: decision)
        case .invalidAnswer?:
            return SessionError(.serverCertificateUntrusted, "the challenge handler's answer for \(origin) was not usable", url: url, trustDecision: decision)
        default:
            return SessionError(SessionError.code(for: decision), "the server \(origin) is not trusted", url: url, trustDecision: decision)
        }
    }
}

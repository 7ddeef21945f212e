import NIOSSL
import Trust
import TrustNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Raises the client-certificate challenge when a server sends a CertificateRequest (NIOSSL's
/// context callback fires only then) and says what NIOSSL is to do: send an identity, send none,
/// or fail the handshake. It returns its answer; ``HandshakeChallenges`` keeps it and maps the
/// server's verdict to its error.
///
/// A class: a ``ClientIdentity`` is 640 bytes inline, which an optional struct would add to every
/// ``HandshakeChallenges`` (and so to every new connection's transient memory), challenge or not.
final class ClientCertificateChallenge: Sendable {
    /// How the challenge was answered, which explains a refusal that follows.
    enum Outcome: Sendable, Equatable {
        case sent, sentNone, cancelled, invalidAnswer, handlerTimedOut
    }

    /// What NIOSSL is told: a configuration (an identity, or no change: no certificate), or a refusal
    /// that fails the handshake.
    enum Reply: Sendable {
        case configure(NIOSSLContextConfigurationOverride)
        case refuse(String)
    }

    /// The error NIOSSL's promise fails with when the handshake is refused on our side.
    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    let origin: Origin
    let taskHandler: (any ChallengeHandler)?
    let sessionHandler: (any ChallengeHandler)?
    let defaultIdentity: ClientIdentity?
    let handlerTimeout: Duration

    init(
        origin: Origin, taskHandler: (any ChallengeHandler)?, sessionHandler: (any ChallengeHandler)?, defaultIdentity: ClientIdentity?,
        handlerTimeout: Duration
    ) {
        self.origin = origin
        self.taskHandler = taskHandler
        self.sessionHandler = sessionHandler
        self.defaultIdentity = defaultIdentity
        self.handlerTimeout = handlerTimeout
    }

    func answer() async -> (outcome: Outcome, reply: Reply) {
        let challenge = AuthenticationChallenge(
            protectionSpace: ProtectionSpace(host: origin.host, port: origin.port, scheme: origin.scheme, authenticationMethod: .clientCertificate),
            proposedCredential: defaultIdentity.map { Credential(identity: $0) })
        guard let disposition = await ChallengeChain.ask(task: taskHandler, session: sessionHandler, challenge, timeout: handlerTimeout) else {
            return (.handlerTimedOut, .refuse("the challenge handler did not answer the client-certificate challenge"))
        }
        switch disposition {
        case .performDefaultHandling:
            guard let defaultIdentity else { return (.sentNone, .configure(.noChanges)) }
            return (.sent, .configure(defaultIdentity.configurationOverride))
        case .useCredential(let credential):
            guard let credential, case .clientIdentity(let identity) = credential.kind else {
                return (.invalidAnswer, .refuse("useCredential for a client-certificate challenge needs Credential(identity:)"))
            }
            return (.sent, .configure(identity.configurationOverride))
        case .rejectProtectionSpace:
            return (.sentNone, .configure(.noChanges))
        case .cancelAuthenticationChallenge:
            return (.cancelled, .refuse("the client-certificate challenge was cancelled"))
        }
    }
}

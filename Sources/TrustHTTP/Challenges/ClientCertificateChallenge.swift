import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import Trust
import TrustNIO

/// Raises the client-certificate challenge when a server sends a CertificateRequest (NIOSSL's
/// context callback fires only then) and answers NIOSSL with the identity to send, or none.
struct ClientCertificateChallenge: Sendable {
    enum Outcome: Sendable, Equatable {
        case sent, sentNone, cancelled, invalidAnswer, handlerTimedOut
    }

    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    let origin: Origin
    let taskHandler: (any ChallengeHandler)?
    let sessionHandler: (any ChallengeHandler)?
    let defaultIdentity: ClientIdentity?
    let handlerTimeout: Duration
    let outcome = NIOLockedValueBox<Outcome?>(nil)

    /// NIOSSL's context callback.
    var callback: NIOSSLContextCallback {
        { _, promise in
            Task { await answer(promise) }
        }
    }

    private func answer(_ promise: EventLoopPromise<NIOSSLContextConfigurationOverride>) async {
        let challenge = AuthenticationChallenge(
            protectionSpace: ProtectionSpace(host: origin.host, port: origin.port, scheme: origin.scheme, authenticationMethod: .clientCertificate),
            proposedCredential: defaultIdentity.map { Credential(identity: $0) })
        guard let disposition = await ChallengeChain.ask(task: taskHandler, session: sessionHandler, challenge, timeout: handlerTimeout) else {
            outcome.withLockedValue { $0 = .handlerTimedOut }
            promise.fail(Refused(description: "the challenge handler did not answer the client-certificate challenge"))
            return
        }
        switch disposition {
        case .performDefaultHandling:
            if let defaultIdentity {
                outcome.withLockedValue { $0 = .sent }
                promise.succeed(defaultIdentity.configurationOverride)
            } else {
                outcome.withLockedValue { $0 = .sentNone }
                promise.succeed(.noChanges)
            }
        case .useCredential(let credential):
            guard let credential, case .clientIdentity(let identity) = credential.kind else {
                outcome.withLockedValue { $0 = .invalidAnswer }
                promise.fail(Refused(description: "useCredential for a client-certificate challenge needs Credential(identity:)"))
                return
            }
            outcome.withLockedValue { $0 = .sent }
            promise.succeed(identity.configurationOverride)
        case .rejectProtectionSpace:
            outcome.withLockedValue { $0 = .sentNone }
            promise.succeed(.noChanges)
        case .cancelAuthenticationChallenge:
            outcome.withLockedValue { $0 = .cancelled }
            promise.fail(Refused(description: "the client-certificate challenge was cancelled"))
        }
    }

    /// The error for a connection that failed during or right after the handshake, if the
    /// client-certificate exchange explains it. `text` holds every error seen on the connection.
    static func error(_ challenge: ClientCertificateChallenge?, _ text: String, origin: Origin, url: URL) -> SessionError? {
        let outcome = challenge?.outcome.withLockedValue({ $0 })
        switch outcome {
        case .cancelled?:
            return SessionError(.cancelled, "the client-certificate challenge for \(origin) was cancelled", url: url, underlying: text)
        case .invalidAnswer?:
            return SessionError(.clientCertificateRejected, "the challenge handler's answer to the client-certificate challenge was not an identity", url: url, underlying: text)
        case .handlerTimedOut?:
            return SessionError(.timedOut, "the client-certificate challenge for \(origin) was not answered", url: url, underlying: text)
        default:
            break
        }
        // Only TLS alerts are the server's verdict on the certificate; a lost connection is not.
        let reading = BoringSSLErrorText(text)
        if reading.certificateRequired {
            return SessionError(.clientCertificateRequired, "\(origin) requires a client certificate and none was sent", url: url, underlying: text)
        }
        guard let alert = reading.clientCertificateRefusal else { return nil }
        switch outcome {
        case .sent?:
            return SessionError(.clientCertificateRejected, "\(origin) refused the client certificate (TLS alert: \(alert.meaning))", url: url, underlying: text)
        case .sentNone?:
            return SessionError(.clientCertificateRequired, "\(origin) requires a client certificate and none was sent", url: url, underlying: text)
        default:
            // No challenge could be raised (no identity, no handler): a handshake refused after the
            // server's own certificate was accepted is, in practice, a missing client certificate.
            return reading.handshakeFailureAlert
                ? SessionError(.clientCertificateRequired, "\(origin) refused the handshake after its certificate was accepted; it probably requires a client certificate (none is configured)", url: url, underlying: text)
                : nil
        }
    }
}

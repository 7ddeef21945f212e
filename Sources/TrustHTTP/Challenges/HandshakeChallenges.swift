import NIOConcurrencyHelpers
import NIOSSL
import Trust
import TrustNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The challenges of one TLS handshake — server trust, and a client certificate when the server asks
/// for one — and the one place where their answers, with what the connection saw, become a
/// ``TrustHTTPClientError``.
///
/// Each challenge returns its answer as a value (``ServerTrustChallenge/decide(_:)``,
/// ``ClientCertificateChallenge/answer()``). NIOSSL asks for them from its callbacks, on the event loop; when
/// a handler may be asked, the callbacks leave them for the request's task, which answers them while it waits
/// for the connection (``answering(_:)``). This type keeps its handshake's answers — each written once,
/// when given — until ``error(after:)`` reads them: the connection factory's, when the handshake fails,
/// and the session's, when a new connection ends before its first response (a TLS 1.3 server refuses a
/// client certificate only after the handshake).
final class HandshakeChallenges: Sendable {
    let origin: Origin
    /// The request's URL, for errors.
    let url: URL
    /// When the handshake times out: no evaluation's fetches (missing intermediates) outlive it.
    let deadline: ContinuousClock.Instant
    /// The handshake's trust decision, whoever gave it: a decision already known (answered in the
    /// handshake), the evaluation, or the challenge.
    let record = TrustRecord()
    /// The route's evaluation, and its diagnostics hook for the decision the handshake goes by.
    private let evaluation: RouteEvaluation
    /// The server-trust challenge; nil when there is no handler to ask (default handling decides alone).
    private let serverTrust: ServerTrustChallenge?
    private let clientCertificate: ClientCertificateChallenge?
    /// Where the handshake's callbacks leave the challenges for the request's task to answer (``answering(_:)``).
    private let queue = ChallengeQueue()
    private let answers = NIOLockedValueBox<(serverTrust: ServerTrustChallenge.Outcome?, clientCertificate: ClientCertificateChallenge.Outcome?)>((nil, nil))

    /// - Parameters:
    ///   - serverTrust: nil when no handler is to be asked: a decision already known is then given
    ///     synchronously in the handshake, else the evaluation's.
    ///   - clientCertificate: nil when no challenge could be answered (no handler, no identity): a
    ///     CertificateRequest is then answered with no certificate by NIOSSL itself.
    ///   - deadline: When the handshake times out.
    init(
        origin: Origin, url: URL, deadline: ContinuousClock.Instant, evaluation: RouteEvaluation, serverTrust: ServerTrustChallenge?,
        clientCertificate: ClientCertificateChallenge?
    ) {
        self.origin = origin
        self.url = url
        self.deadline = deadline
        self.evaluation = evaluation
        self.serverTrust = serverTrust
        self.clientCertificate = clientCertificate
    }

    /// Whether a challenge handler may be asked: then the request's task answers the challenges (``answering(_:)``).
    var asksHandlers: Bool { serverTrust != nil }

    /// Runs `connect` — the connection's TCP and TLS handshake — in the calling task (the request's), while a
    /// child task of it answers the handshake's challenges as NIOSSL raises them: the challenge handlers run
    /// on behalf of the request, and cancelling the request cancels them. When `connect` returns or throws,
    /// the child ends and a challenge raised after it is refused (no one is left to answer).
    ///
    /// Only for a handshake that asks handlers (``answering(_:_:)``). Not inlined: the task group took room in the
    /// frame of `TrustHTTPClient.connect`, which a request holds through every handshake, most of which ask none
    /// (measured: "Frame sizes" in RequestFlow.md).
    @inline(never)
    private func answering<T>(_ connect: () async throws -> T) async throws -> T {
        let queue = self.queue
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await queue.serve() }
            defer { group.cancelAll() }
            return try await connect()
        }
    }

    /// ``answering(_:)`` for a connection's handshake when it asks challenge handlers; otherwise `connect` alone
    /// (plain HTTP has no handshake).
    static func answering<T>(_ handshake: HandshakeChallenges?, _ connect: () async throws -> T) async throws -> T {
        guard let handshake, handshake.asksHandlers else { return try await connect() }
        return try await handshake.answering(connect)
    }

    /// Decides the server's trust in the handshake. The decision, with its validated path, is kept in
    /// ``record`` (NIOSSL need not keep its own parsed copy of the path for the connection's lifetime),
    /// and goes to the route's diagnostics hook: it is the decision the handshake went by.
    ///
    /// NIOSSL keeps its callbacks as long as the connection lives, so they hold this object weakly: the
    /// request that makes the connection holds it while the handshake runs, and a pooled connection does not
    /// keep it (its handlers, the request's URL) for the rest of its life.
    var verifier: ServerTrustVerifier {
        let (evaluation, deadline) = (self.evaluation, self.deadline)
        var verifier: ServerTrustVerifier
        if asksHandlers {
            verifier = ServerTrustVerifier(
                known: nil,
                handOff: { [weak self] trust, answer in
                    guard let self else { return answer(Self.abandoned(trust)) }
                    self.queue.post(ChallengeQueue.Job(run: { answer(await self.challenge(trust)) }, abandon: { answer(Self.abandoned(trust)) }))
                })
        } else {
            verifier = ServerTrustVerifier(
                known: { trust in
                    guard let measured = evaluation.decisionWithoutSuspending(trust) else { return nil }
                    evaluation.record(measured.decision, measured: measured)
                    return measured.decision
                },
                decide: { trust in
                    // The evaluation runs in a task of its own, which the handshake's timeout does not end: what it
                    // fetches is bounded by the handshake's deadline here.
                    let measured = await IntermediateFetchingEvaluator.$deadline.withValue(deadline) {
                        await evaluation.evaluate(trust, afterImmediate: true)
                    }
                    evaluation.record(measured.decision, measured: measured)
                    return measured.decision
                })
        }
        verifier.keepsValidatedChain = false
        return verifier
    }

    /// The server-trust challenge's decision, in the request's task; its outcome is kept for ``error(after:)``.
    /// A request cancelled while its handlers were asked refuses the handshake, but judged nothing: no
    /// decision goes to the diagnostics hook (logs, metrics, traces, the decision observer).
    private func challenge(_ trust: ServerTrust) async -> TrustDecision {
        guard let serverTrust else { return Self.abandoned(trust) }
        let answer = await IntermediateFetchingEvaluator.$deadline.withValue(deadline) { await serverTrust.decide(trust) }
        answers.withLockedValue { $0.serverTrust = answer.outcome }
        if answer.outcome.isJudgement { evaluation.record(answer.decision, measured: answer.measured) }
        return answer.decision
    }

    /// What a handshake that outlived the request making it is told (NIOSSL asked after the request had
    /// gone): not trusted, as no one is left to answer the challenge.
    private static func abandoned(_ trust: ServerTrust) -> TrustDecision {
        .refused(
            [.refusedByApplication("the request that made this connection ended before its server-trust challenge")], trust: trust,
            policy: .challengeHandler(acceptedWithCredential: false))
    }

    /// NIOSSL's context callback, which it calls when the server asks for a certificate; nil when no
    /// challenge could be answered. With a handler to ask, the request's task answers it (``answering(_:)``);
    /// without one, default handling needs no task of the request's. It holds the challenge, the queue and the
    /// answers' box, not this object (see ``verifier``).
    var clientCertificateCallback: NIOSSLContextCallback? {
        guard let clientCertificate else { return nil }
        let queue = asksHandlers ? self.queue : nil
        return { [answers] _, promise in
            @Sendable func answer() async {
                let (outcome, reply) = await clientCertificate.answer()
                answers.withLockedValue { $0.clientCertificate = outcome }
                switch reply {
                case .configure(let override): promise.succeed(override)
                case .refuse(let reason): promise.fail(ClientCertificateChallenge.Refused(description: reason))
                }
            }
            guard let queue else {
                Task { await answer() }
                return
            }
            queue.post(
                ChallengeQueue.Job(
                    run: answer,
                    abandon: {
                        promise.fail(
                            ClientCertificateChallenge.Refused(
                                description: "the request that made this connection ended before its client-certificate challenge"))
                    }))
        }
    }

    /// The error for a handshake that failed — or a new connection that ended before its first response —
    /// when the challenges explain it: a refused trust decision (its code chosen by how the handler
    /// answered), or the client-certificate exchange. `seen` is every error the connection saw (TLS
    /// alerts, as BoringSSL words them). Nil when neither explains the failure — nor when the request was
    /// cancelled during the server-trust challenge, which judged nothing.
    func error(after seen: String) -> TrustHTTPClientError? {
        let (trustOutcome, certificateOutcome) = answers.withLockedValue { $0 }
        // The request ended (cancelled, or its timeout) while its handlers were asked: not a trust refusal.
        // The failure is the request's end, which the request reports (`cancelled`, `timedOut`).
        if trustOutcome == .requestCancelled { return nil }
        if let decision = record.decision, !decision.isTrusted {
            return trustError(decision, outcome: trustOutcome)
        }
        return clientCertificateError(seen, outcome: certificateOutcome)
    }

    private func trustError(_ decision: TrustDecision, outcome: ServerTrustChallenge.Outcome?) -> TrustHTTPClientError {
        switch outcome {
        case .cancelled?:
            return TrustHTTPClientError(.cancelled, "the server-trust challenge for \(origin) was cancelled", url: url, trustDecision: decision)
        case .handlerTimedOut?:
            return TrustHTTPClientError(
                .timedOut, "the challenge handler did not answer the server-trust challenge for \(origin)", url: url, trustDecision: decision)
        case .rejected?:
            return TrustHTTPClientError(.serverCertificateUntrusted, "the challenge handler rejected the server \(origin)", url: url, trustDecision: decision)
        case .invalidAnswer?:
            return TrustHTTPClientError(
                .serverCertificateUntrusted, "the challenge handler's answer for \(origin) was not usable", url: url, trustDecision: decision)
        case .defaultHandling?, .accepted?, .requestCancelled?, nil:
            return TrustHTTPClientError(TrustHTTPClientError.code(for: decision), "the server \(origin) is not trusted", url: url, trustDecision: decision)
        }
    }

    private func clientCertificateError(_ text: String, outcome: ClientCertificateChallenge.Outcome?) -> TrustHTTPClientError? {
        switch outcome {
        case .cancelled?:
            return TrustHTTPClientError(.cancelled, "the client-certificate challenge for \(origin) was cancelled", url: url, underlying: text)
        case .invalidAnswer?:
            return TrustHTTPClientError(
                .clientCertificateRejected, "the challenge handler's answer to the client-certificate challenge was not an identity", url: url, underlying: text
            )
        case .handlerTimedOut?:
            return TrustHTTPClientError(.timedOut, "the client-certificate challenge for \(origin) was not answered", url: url, underlying: text)
        case .sent?, .sentNone?, nil:
            break
        }
        // Only TLS alerts are the server's verdict on the certificate; a lost connection is not.
        let reading = BoringSSLErrorText(text)
        if reading.certificateRequired {
            return TrustHTTPClientError(.clientCertificateRequired, "\(origin) requires a client certificate and none was sent", url: url, underlying: text)
        }
        guard let alert = reading.clientCertificateRefusal else { return nil }
        switch outcome {
        case .sent?:
            return TrustHTTPClientError(
                .clientCertificateRejected, "\(origin) refused the client certificate (TLS alert: \(alert.meaning))", url: url, underlying: text)
        case .sentNone?:
            return TrustHTTPClientError(.clientCertificateRequired, "\(origin) requires a client certificate and none was sent", url: url, underlying: text)
        default:
            // No challenge was raised (no identity, no handler, or the server asked for none): a handshake
            // refused after the server's own certificate was accepted is, in practice, a missing client
            // certificate.
            return reading.handshakeFailureAlert
                ? TrustHTTPClientError(
                    .clientCertificateRequired,
                    "\(origin) refused the handshake after its certificate was accepted; it probably requires a client certificate (none is configured)",
                    url: url, underlying: text)
                : nil
        }
    }
}

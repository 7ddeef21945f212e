import Foundation
import NIOConcurrencyHelpers
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// A challenge handler that never answers — not even when its Task is cancelled — until the test
/// releases it (so nothing is leaked past the test). Only the first `stalls` challenges stall;
/// later ones get `.performDefaultHandling`, so the session that holds it stays usable.
final class StallingHandler: ChallengeHandler {
    private let state = NIOLockedValueBox<(asked: Int, waiting: [CheckedContinuation<Void, Never>], released: Bool, stopped: Bool)>(
        (0, [], false, false))
    let stalls: Int
    let method: AuthenticationMethod?

    /// Stalls the first `stalls` challenges (of `method`, or of any kind).
    init(stalls: Int = 1, method: AuthenticationMethod? = nil) {
        self.stalls = stalls
        self.method = method
    }

    var asked: Int { state.withLockedValue { $0.asked } }

    func handle(_ challenge: AuthenticationChallenge) async -> ChallengeDisposition {
        if let method, challenge.protectionSpace.authenticationMethod != method { return .performDefaultHandling }
        let stall = state.withLockedValue { state -> Bool in
            state.asked += 1
            return state.asked <= stalls && !state.released && !state.stopped
        }
        if stall {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLockedValue { state -> Bool in
                    if state.released { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
        return .performDefaultHandling
    }

    /// Answers every challenge from now on; the calls already stalled stay stalled until ``release()``.
    func stopStalling() {
        state.withLockedValue { $0.stopped = true }
    }

    /// Lets every stalled call return.
    func release() {
        let waiting = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.released = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}

/// The `TrustHTTPClientDelegate` shape of a handler that never calls its completion handler (it keeps it,
/// so nothing leaks, and calls it when released).
final class SilentDelegate: TrustHTTPClientDelegate {
    private let pending = NIOLockedValueBox<[@Sendable (ChallengeDisposition) -> Void]>([])
    private let asked = NIOLockedValueBox((count: 0, stopped: false))

    func session(
        _ session: TrustHTTPClient, didReceive challenge: AuthenticationChallenge, completionHandler: @escaping @Sendable (ChallengeDisposition) -> Void
    ) {
        let first = asked.withLockedValue { asked -> Bool in
            asked.count += 1
            return asked.count == 1 && !asked.stopped
        }
        guard first else { return completionHandler(.performDefaultHandling) }
        pending.withLockedValue { $0.append(completionHandler) }
    }

    /// Answers every challenge from now on; the one already kept stays unanswered until ``release()``.
    func stopStalling() {
        asked.withLockedValue { $0.stopped = true }
    }

    func release() {
        let handlers = pending.withLockedValue { handlers in
            defer { handlers = [] }
            return handlers
        }
        for handler in handlers { handler(.performDefaultHandling) }
    }
}

@Suite("Faults: servers that die or stall, challenges never answered — the Session fails typed and stays usable", .serialized, .timeLimit(.minutes(5)), .paced)
struct FaultTests {
    static let good = Lab.pki.servers["good"]!

    /// The code each fault must fail with (never `timedOut`: nothing here waits for a timer).
    /// A TLS 1.3 server's first flight ends with its Finished: a client that has read it all (and
    /// trusted the certificate) before it sees the close has completed its handshake, and the
    /// connection is lost under the request instead — either code is right for that fault.
    static let expectedCodes: [(LabFaultServer.Fault, Set<TrustHTTPClientError.Code>)] = [
        (.closeAfterClientHello, [.secureConnectionFailed]),
        (.closeAfterServerFlight, [.secureConnectionFailed, .networkConnectionLost]),
        (.closeMidHeaders, [.networkConnectionLost]),
        (.closeMidBody, [.networkConnectionLost]),
        (.closeMidChunkedBody, [.networkConnectionLost]),
        (.http2ResetStream, [.networkConnectionLost]),
        (.http2GoAway, [.networkConnectionLost]),
        (.http2CloseMidData, [.networkConnectionLost]),
    ]

    /// A server dying at each point of the connection fails the request at once with a specific code;
    /// the same TrustHTTPClient then serves a normal request. Repeated, so a failure that leaves state behind shows.
    @Test(arguments: expectedCodes.map(\.0))
    func serverDyingFailsTheRequestFastAndTyped(_ fault: LabFaultServer.Fault) async throws {
        let expected = try #require(Self.expectedCodes.first { $0.0 == fault }?.1)
        let server = try await LabFaultServer.start(fault, host: "good.lab.test", chain: Self.good.chain, privateKey: Self.good.privateKey)
        let good = try await LabServer.start("good", pki: Lab.pki)
        // Long timeouts: a fault that is only noticed by a timer would show as `timedOut`.
        let session = try labSession {
            $0.requestTimeout = .seconds(30)
            $0.connectTimeout = .seconds(30)
        }
        for round in 0..<3 {
            let failure = await timedFailure { try await session.data(for: TrustHTTPClientRequest(url: URL(string: server.baseURL + "/")!)) }
            if round == 0 { report("\(fault.rawValue) (data)", failure) }
            #expect(failure.error.map { expected.contains($0.code) } == true, "\(fault): \(String(describing: failure.error))")
            if fault == .closeAfterClientHello {
                #expect(failure.error?.handshakeFailure == .closedDuringHandshake, "\(String(describing: failure.error))")
            }
            await expectUsable(session, good)
        }
        // A reset stream (INTERNAL_ERROR: the server's answer) leaves the shared HTTP/2 connection open (and
        // reused), not retried; a GOAWAY naming no stream as processed refuses the request, which is retried once
        // on a new connection (and refused again); every other fault costs a connection.
        let expectedConnections =
            switch fault {
            case .http2ResetStream: 1
            case .http2GoAway: 6
            default: 3
            }
        #expect(server.acceptedConnections == expectedConnections)
        await session.shutdown()
        try await good.shutdown()
        try await server.shutdown()
    }

    /// With `bytes(for:)` a fault after the response head surfaces while the body is read — as a
    /// `TrustHTTPClientError` too, not as a raw NIO error.
    @Test(arguments: [LabFaultServer.Fault.closeMidBody, .closeMidChunkedBody, .http2CloseMidData])
    func streamedBodyCutShortFailsTyped(_ fault: LabFaultServer.Fault) async throws {
        let server = try await LabFaultServer.start(fault, host: "good.lab.test", chain: Self.good.chain, privateKey: Self.good.privateKey)
        let good = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession { $0.requestTimeout = .seconds(30) }
        let response = try await session.bytes(for: TrustHTTPClientRequest(url: URL(string: server.baseURL + "/")!))
        #expect(response.statusCode == 200)
        var received = 0
        do {
            for try await chunk in response.body { received += chunk.readableBytes }
            Issue.record("the truncated body ended normally after \(received) bytes")
        } catch let error as TrustHTTPClientError {
            #expect(error.code == .networkConnectionLost, "\(error)")
            // An orderly close before the body's end (HTTP/1.1: short Content-Length, no last chunk) is
            // told apart from a failed connection: curl's "partial file".
            #expect(error.isIncompleteBody == (fault != .http2CloseMidData), "\(error)")
        } catch {
            Issue.record("expected a SessionError, got \(type(of: error)): \(error)")
        }
        #expect(received == 100)
        await expectUsable(session, good)
        await session.shutdown()
        try await good.shutdown()
        try await server.shutdown()
    }

    /// A body read that is cancelled part-way ends with `cancelled` — never as a (truncated) normal end.
    @Test(arguments: [LabServer.Protocols.http1Only, .http2Only])
    func cancelledBodyReadIsNotATruncatedSuccess(_ protocols: LabServer.Protocols) async throws {
        let good = try await LabServer.start("good", pki: Lab.pki, protocols: protocols)
        let session = try labSession()
        let response = try await session.bytes(for: TrustHTTPClientRequest(url: url(good, "/bytes/5000000")))
        let reader = Task { () async throws -> Int in
            var received = 0
            for try await chunk in response.body {
                received += chunk.readableBytes
                withUnsafeCurrentTask { $0?.cancel() }  // the reader's Task is cancelled after its first chunk
            }
            return received
        }
        do {
            let received = try await reader.value
            Issue.record("the cancelled read ended normally after \(received) of 5000000 bytes")
        } catch let error as TrustHTTPClientError {
            #expect(error.code == .cancelled, "\(error)")
        } catch {
            Issue.record("expected a SessionError, got \(type(of: error)): \(error)")
        }
        await expectUsable(session, good)
        await session.shutdown()
        try await good.shutdown()
    }

    /// Plain HTTP: the same faults without TLS.
    @Test(arguments: [LabFaultServer.Fault.closeAfterClientHello, .closeMidHeaders, .closeMidBody, .closeMidChunkedBody])
    func plainServerDyingFailsTheRequestFast(_ fault: LabFaultServer.Fault) async throws {
        let server = try await LabFaultServer.startPlain(fault)
        let good = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession { $0.requestTimeout = .seconds(30) }
        let failure = await timedFailure { try await session.data(for: TrustHTTPClientRequest(url: URL(string: server.baseURL + "/")!)) }
        report("plain \(fault.rawValue)", failure)
        #expect(failure.error?.code == .networkConnectionLost, "\(fault): \(String(describing: failure.error))")
        await expectUsable(session, good)
        await session.shutdown()
        try await good.shutdown()
        try await server.shutdown()
    }

    /// A server that accepts and never answers the handshake: the connect timeout (or the request
    /// timeout, whichever is shorter) fires with `timedOut`; the TrustHTTPClient stays usable.
    /// (The connect timeout is 2 s, not 1, because it also bounds the follow-up request's handshake
    /// on a busy machine.)
    @Test(arguments: [(connect: 2, request: 30), (connect: 30, request: 1)])
    func stalledHandshakeTimesOut(_ timeouts: (connect: Int, request: Int)) async throws {
        let server = try await LabFaultServer.start(.stallHandshake, host: "good.lab.test", chain: Self.good.chain, privateKey: Self.good.privateKey)
        let good = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession {
            $0.connectTimeout = .seconds(timeouts.connect)
            $0.requestTimeout = .seconds(timeouts.request)
        }
        let failure = await timedFailure { try await session.data(for: TrustHTTPClientRequest(url: URL(string: server.baseURL + "/")!)) }
        report("stall-handshake (connect \(timeouts.connect) s, request \(timeouts.request) s)", failure)
        #expect(failure.error?.code == .timedOut, "\(String(describing: failure.error))")
        #expect(server.acceptedConnections == 1)
        await expectUsable(session, good)
        await session.shutdown()
        try await good.shutdown()
        try await server.shutdown()
    }

    /// A plain server that reads the request and never answers: the request timeout fires.
    @Test func stalledPlainServerTimesOut() async throws {
        let server = try await LabFaultServer.startPlain(.stallHandshake)
        let good = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession { $0.requestTimeout = .seconds(1) }
        let failure = await timedFailure { try await session.data(for: TrustHTTPClientRequest(url: URL(string: server.baseURL + "/")!)) }
        report("plain stall", failure)
        #expect(failure.error?.code == .timedOut, "\(String(describing: failure.error))")
        await expectUsable(session, good)
        await session.shutdown()
        try await good.shutdown()
        try await server.shutdown()
    }

    /// Server-trust challenge handlers (task-level, session-level, delegate) that never answer:
    /// the request ends with `timedOut` at its timeout, and the TrustHTTPClient stays usable.
    @Test(arguments: ["task", "session", "delegate"])
    func unansweredServerTrustChallengeTimesOut(_ level: String) async throws {
        let good = try await LabServer.start("good", pki: Lab.pki)
        let handler = StallingHandler(method: .serverTrust)
        let delegate = SilentDelegate()
        var configuration = TrustHTTPClientConfiguration()
        configuration.serverTrust = DefaultTrustEvaluator(anchors: Lab.anchors)
        configuration.resolve = LabPKI.loopbackResolve
        configuration.requestTimeout = .seconds(30)
        if level == "session" { configuration.challengeHandler = handler }
        let session = try TrustHTTPClient(configuration: configuration, delegate: level == "delegate" ? delegate : nil)
        let request = TrustHTTPClientRequest(url: url(good), timeout: .seconds(1), challengeHandler: level == "task" ? handler : nil)
        let failure = await timedFailure { try await session.data(for: request) }
        report("unanswered server-trust challenge (\(level))", failure)
        #expect(failure.error?.code == .timedOut, "\(String(describing: failure.error))")
        // On a loaded machine the 1 s can pass before the handshake reaches the handler: the check's own challenge
        // must not be the one stalled. A call already stalled stays stalled while the session is used again.
        handler.stopStalling()
        delegate.stopStalling()
        await expectUsable(session, good)
        handler.release()
        delegate.release()
        await session.shutdown()
        try await good.shutdown()
    }

    /// A client-certificate challenge that is never answered (a mutual-TLS server asks for one).
    @Test(arguments: ["task", "session"])
    func unansweredClientCertificateChallengeTimesOut(_ level: String) async throws {
        let server = try await LabServer.start(mutualTLS: .optional, pki: Lab.pki)
        let good = try await LabServer.start("good", pki: Lab.pki)
        let handler = StallingHandler(method: .clientCertificate)
        let session = try labSession { configuration in
            configuration.requestTimeout = .seconds(30)
            if level == "session" { configuration.challengeHandler = handler }
        }
        // 3 s: the handshake must reach the server's certificate request (and the handler) before the timeout, on a
        // loaded machine too; what is checked is that the timeout then ends the stalled challenge.
        let request = TrustHTTPClientRequest(url: url(server, "/whoami"), timeout: .seconds(3), challengeHandler: level == "task" ? handler : nil)
        let failure = await timedFailure { try await session.data(for: request) }
        report("unanswered client-certificate challenge (\(level))", failure)
        #expect(failure.error?.code == .timedOut, "\(String(describing: failure.error))")
        #expect(handler.asked >= 1)
        handler.stopStalling()  // as in unansweredServerTrustChallengeTimesOut
        await expectUsable(session, good)
        // The same mutual-TLS server, now that the handler answers (anonymously: optional mode).
        let anonymous = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/whoami"), challengeHandler: level == "task" ? handler : nil))
        #expect(anonymous.text == "anonymous\n")
        handler.release()
        await session.shutdown()
        try await good.shutdown()
        try await server.shutdown()
    }

    /// An HTTP-authentication challenge (Basic) that is never answered.
    @Test(arguments: ["task", "session"])
    func unansweredHTTPAuthenticationChallengeTimesOut(_ level: String) async throws {
        let good = try await LabServer.start("good", pki: Lab.pki)
        let handler = StallingHandler(method: .httpBasic)
        let session = try labSession { configuration in
            configuration.requestTimeout = .seconds(30)
            if level == "session" { configuration.challengeHandler = handler }
        }
        // The connection is opened first, so that the 1 s covers the round trip to the 401 only, never a handshake
        // slowed by a loaded machine, and the handler is asked before it passes.
        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(good, "/"))).statusCode == 200)
        let request = TrustHTTPClientRequest(url: url(good, "/basic"), timeout: .seconds(1), challengeHandler: level == "task" ? handler : nil)
        let failure = await timedFailure { try await session.data(for: request) }
        report("unanswered HTTP Basic challenge (\(level))", failure)
        #expect(failure.error?.code == .timedOut, "\(String(describing: failure.error))")
        #expect(handler.asked == 1)
        await expectUsable(session, good)
        handler.release()
        await session.shutdown()
        try await good.shutdown()
    }
}

import Foundation
import NIOConcurrencyHelpers
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// Challenge handlers are asked on behalf of the request: cancelling the request's task cancels a handler
/// that is still deciding, and the request ends with `cancelled` — it does not wait for the handler's timeout.
/// A server-trust challenge ended so judged nothing: the handshake is refused, but no trust decision is recorded
/// (the decision observer sees none) and the error carries none.
@Suite("Challenges: cancelling the request cancels its challenge handlers", .timeLimit(.minutes(5)), .paced)
struct ChallengeCancellationTests {
    /// A handler that waits until it is cancelled, and says when it was asked and when it saw the cancellation.
    struct WaitingHandler: ChallengeHandler {
        let method: AuthenticationMethod
        let events: AsyncStream<String>.Continuation

        func handle(_ challenge: AuthenticationChallenge) async -> ChallengeDisposition {
            guard challenge.protectionSpace.authenticationMethod == method else { return .performDefaultHandling }
            events.yield("asked")
            // An hour: far past the request's timeout below; only a cancellation ends it early.
            if (try? await Task.sleep(for: .seconds(3600))) == nil { events.yield("cancelled") }
            return .performDefaultHandling
        }
    }

    @Test(arguments: ["task", "session"])
    func cancellingTheRequestCancelsItsServerTrustHandler(_ level: String) async throws {
        try await withLabServers(["good"]) { servers in
            try await expectCancellation(level: level, method: .serverTrust, url: url(servers["good"]!))
        }
    }

    @Test(arguments: ["task", "session"])
    func cancellingTheRequestCancelsItsClientCertificateHandler(_ level: String) async throws {
        let server = try await LabServer.start(mutualTLS: .optional, pki: Lab.pki)
        try await withTeardown({ try? await server.shutdown() }) {
            try await expectCancellation(level: level, method: .clientCertificate, url: url(server, "/whoami"))
        }
    }

    /// The connect timeout (which bounds the handshake) ends a server-trust challenge whose handler is still
    /// deciding: the request ends `timedOut`, with no trust decision made, recorded or carried.
    @Test(arguments: ["task", "session"])
    func connectTimeoutDuringTheServerTrustChallengeIsNoTrustDecision(_ level: String) async throws {
        try await withLabServers(["good"]) { servers in
            let (events, continuation) = AsyncStream.makeStream(of: String.self)
            let handler = WaitingHandler(method: .serverTrust, events: continuation)
            let decisions = NIOLockedValueBox<[TrustDecisionEvent]>([])
            let session = try labSession { configuration in
                configuration.requestTimeout = .seconds(600)
                // The handler waits an hour, so only this timeout can end it; 6 s, so that on a loaded machine the
                // handshake reaches the handler (and "asked") before it passes.
                configuration.connectTimeout = .seconds(6)
                configuration.decisionObserver = { event in decisions.withLockedValue { $0.append(event) } }
                if level == "session" { configuration.challengeHandler = handler }
            }
            try await withTeardown({ await session.shutdown() }) {
                let request = TrustHTTPClientRequest(url: url(servers["good"]!), challengeHandler: level == "task" ? handler : nil)
                let result = await Task { try await session.data(for: request) }.result
                // The handler's cancellation may reach it after the request has ended (as in expectCancellation): the
                // wait is for "cancelled", bounded (30 s) so that a handler never asked or never cancelled fails the
                // test rather than hanging it.
                let bound = Task {
                    try? await Task.sleep(for: .seconds(30))
                    continuation.finish()
                }
                var seen: [String] = []
                for await event in events {
                    seen.append(event)
                    if event == "cancelled" { break }
                }
                bound.cancel()
                continuation.finish()
                #expect(seen == ["asked", "cancelled"])
                let error = try #require(result.failure as? TrustHTTPClientError, "\(result)")
                #expect(error.code == .timedOut, "\(error)")
                #expect(error.trustDecision == nil, "\(error)")
                #expect(decisions.withLockedValue { $0 }.isEmpty, "\(decisions.withLockedValue { $0 })")
            }
        }
    }

    private func expectCancellation(level: String, method: AuthenticationMethod, url: URL) async throws {
        let (events, continuation) = AsyncStream.makeStream(of: String.self)
        let handler = WaitingHandler(method: method, events: continuation)
        let decisions = NIOLockedValueBox<[TrustDecisionEvent]>([])
        let session = try labSession { configuration in
            configuration.requestTimeout = .seconds(600)
            configuration.decisionObserver = { event in decisions.withLockedValue { $0.append(event) } }
            if level == "session" { configuration.challengeHandler = handler }
        }
        try await withTeardown({ await session.shutdown() }) {
            let request = TrustHTTPClientRequest(url: url, challengeHandler: level == "task" ? handler : nil)
            let task = Task { try await session.data(for: request) }
            // A request that ends without asking the handler ends the wait below too (and fails the test). Once the
            // handler was asked, the wait is for its cancellation, which may reach it after the request has ended.
            let asked = NIOLockedValueBox(false)
            Task {
                _ = await task.result
                if !asked.withLockedValue({ $0 }) { continuation.finish() }
            }
            var seen: [String] = []
            for await event in events {
                seen.append(event)
                if event == "asked" {
                    asked.withLockedValue { $0 = true }
                    task.cancel()
                }
                if event == "cancelled" { break }
            }
            #expect(seen == ["asked", "cancelled"])
            let result = await task.result
            let error = try #require(result.failure as? TrustHTTPClientError, "\(result)")
            #expect(error.code == .cancelled, "\(error)")
            if method == .serverTrust {
                // Cancelled before the handler answered: no one judged the server.
                #expect(error.trustDecision == nil, "\(error)")
                #expect(decisions.withLockedValue { $0 }.isEmpty, "\(decisions.withLockedValue { $0 })")
            }
        }
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

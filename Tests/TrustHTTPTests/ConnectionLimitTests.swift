import Foundation
import NIOConcurrencyHelpers
import Testing
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// The per-origin connection limit end to end (`TrustHTTPClientConfiguration.maximumConnectionsPerOrigin`, the pool's
/// state machine): connections are counted where they arrive, at the lab server.
@Suite("Connection limit per origin: queue, HTTP/2 streams", .serialized, .timeLimit(.minutes(5)), .paced)
struct ConnectionLimitTests {
    /// Starts a lab `good` server, runs `body` with it and a lab session, and stops both.
    private func withServer(
        _ protocols: LabServer.Protocols, streams: Int = 100, configure: (inout TrustHTTPClientConfiguration) -> Void = { _ in },
        _ body: (LabServer, TrustHTTPClient) async throws -> Void
    ) async throws {
        let server = try await LabServer.start("good", pki: Lab.pki, protocols: protocols, maximumConcurrentStreams: streams)
        let session = try labSession { configuration in
            // Generous: a thousand requests share a few connections on two busy cores.
            configuration.requestTimeout = .seconds(240)
            configure(&configuration)
        }
        try await withTeardown({
            await session.shutdown()
            try? await server.shutdown()
        }) {
            try await body(server, session)
        }
    }

    /// Sends `count` requests to `path` at once; returns their statuses.
    private func burst(_ count: Int, _ session: TrustHTTPClient, _ server: LabServer, _ path: String = "/") async throws -> [Int] {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<count { group.addTask { try await session.data(for: TrustHTTPClientRequest(url: url(server, path))).statusCode } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test func aThousandConcurrentHTTP1RequestsOpenAtMostSixConnections() async throws {
        try await withServer(.http1Only) { server, session in
            #expect(session.configuration.maximumConnectionsPerOrigin == 6)
            let statuses = try await burst(1_000, session, server)
            #expect(statuses == Array(repeating: 200, count: 1_000))
            #expect((1...6).contains(server.acceptedConnectionCount), "\(server.acceptedConnectionCount) connections")
            print("[pool] 1,000 HTTP/1.1 requests: \(server.acceptedConnectionCount) connections")
        }
    }

    /// The server allows 1,000 concurrent streams (its SETTINGS_MAX_CONCURRENT_STREAMS): one connection carries them all.
    @Test func aThousandConcurrentHTTP2RequestsShareOneConnection() async throws {
        try await withServer(.http2AndHTTP1, streams: 1_000) { server, session in
            let statuses = try await burst(1_000, session, server)
            #expect(statuses == Array(repeating: 200, count: 1_000))
            #expect(server.acceptedConnectionCount == 1, "\(server.acceptedConnectionCount) connections")
        }
    }

    /// A server that allows 2 streams per connection: 4 slow requests at once fill the first connection (its
    /// SETTINGS known from a first request), so a second is made, and only one.
    @Test func aFullHTTP2ConnectionGetsASecondOne() async throws {
        try await withServer(.http2AndHTTP1, streams: 2) { server, session in
            let first = try await session.data(for: TrustHTTPClientRequest(url: url(server)))
            #expect(first.httpVersion == .http2)
            let statuses = try await burst(4, session, server, "/slow?ms=500")
            #expect(statuses == Array(repeating: 200, count: 4))
            #expect(server.acceptedConnectionCount == 2, "\(server.acceptedConnectionCount) connections")
        }
    }

    /// With one connection allowed and held by an upload that never ends (its body's first chunk shows it has
    /// the connection), a second request waits in the queue: its own deadline fails it as timed out, as any
    /// request timeout, and a cancelled one fails as cancelled — both while the first is still in flight.
    /// Without the limit, each would have had a connection of its own and succeeded. The session works afterwards.
    @Test(arguments: [LabServer.Protocols.http1Only, .http2AndHTTP1])
    func aQueuedRequestHonoursItsDeadlineAndCancellation(_ protocols: LabServer.Protocols) async throws {
        try await withServer(protocols, streams: 1, configure: { $0.maximumConnectionsPerOrigin = 1 }) { server, session in
            // Over HTTP/2 the connection's single stream is what is held, once its SETTINGS are known.
            #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server))).statusCode == 200)
            let started = AsyncStream<Void>.makeStream()
            let stuck = TrustHTTPClientRequest.Body.stream(length: 5_000) {
                started.continuation.yield()
                return AsyncStream<[UInt8]> { $0.yield([UInt8](repeating: 7, count: 1_000)) }
            }
            let holderDone = NIOLockedValueBox(false)
            let holder = Task {
                defer { holderDone.withLockedValue { $0 = true } }
                return try await session.data(for: TrustHTTPClientRequest(url: url(server, "/upload"), method: "PUT", body: stuck))
            }
            var starts = started.stream.makeAsyncIterator()
            _ = await starts.next()
            let timedOut = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(server), timeout: .milliseconds(500))) }
            #expect(timedOut?.code == .timedOut)
            #expect(timedOut?.message.contains("timed out") == true)
            let waiting = Task { try await session.data(for: TrustHTTPClientRequest(url: url(server))) }
            try await Task.sleep(for: .seconds(1))
            waiting.cancel()
            let cancelled = await sessionError { try await waiting.value }
            #expect(cancelled?.code == .cancelled)
            #expect(holderDone.withLockedValue { $0 } == false)
            holder.cancel()
            _ = try? await holder.value
            await expectUsable(session, server)
        }
    }

    /// Streamed responses of a body far larger than what is buffered (1 GB: the server never gets to its end),
    /// each dropped after its first chunk: each one's connection (HTTP/1.1) or stream (HTTP/2, one per
    /// connection here) is abandoned and its place freed, so the 7th and 8th requests are served with 6 places.
    /// Without it the 7th waits in the queue until its deadline.
    @Test(arguments: [LabServer.Protocols.http1Only, .http2AndHTTP1])
    func aStreamedBodyDroppedUnreadFreesItsPlace(_ protocols: LabServer.Protocols) async throws {
        try await withServer(protocols, streams: 1, configure: { $0.requestTimeout = .seconds(60) }) { server, session in
            #expect(session.configuration.maximumConnectionsPerOrigin == 6)
            for _ in 0..<7 {
                let response = try await session.bytes(for: TrustHTTPClientRequest(url: url(server, "/bytes/1000000000")))
                var iterator = response.body.makeAsyncIterator()
                #expect((try await iterator.next()?.readableBytes ?? 0) > 0)
            }
            // A cancelled body frees its place too, and reading it afterwards throws.
            let cancelled = try await session.bytes(for: TrustHTTPClientRequest(url: url(server, "/bytes/1000000000")))
            cancelled.body.cancel()
            await #expect(throws: TrustHTTPClientError.self) { for try await _ in cancelled.body {} }
            #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server))).statusCode == 200)
        }
    }
}

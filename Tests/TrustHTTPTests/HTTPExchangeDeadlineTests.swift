import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing
import TrustTestSupport

@testable import TrustHTTP

/// An exchange's deadlines (``HTTPExchange/armDeadlines(_:on:)``) and read timeout on a test channel: a deadline
/// that passes first fails the exchange and closes its channel; one whose end came first was cancelled and never
/// runs, however far time moves on. Time is the test loop's.
@Suite("HTTPExchange deadlines: kept, cancelled, and passed", .paced)
struct HTTPExchangeDeadlineTests {
    /// The HTTP/1.1 pipeline of a connection (no TLS), connected.
    private static func http1Channel() async throws -> NIOAsyncTestingChannel {
        let channel = try await NIOAsyncTestingChannel { channel in
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(ResponseHeadLimiter(limits: ResponseLimits()))
            try pipeline.addHandlers([
                HTTPRequestEncoder(), ByteToMessageHandler(HTTPResponseDecoder(informationalResponseStrategy: .forward)), HTTP1ExchangeHandler(),
            ])
        }
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).get()
        return channel
    }

    /// Deadlines of `head` and `total` whose passing is counted in `timeouts`.
    private static func timeouts(head: Duration, total: Duration?, counting timeouts: NIOLockedValueBox<Int>) -> Connection.ExchangeTimeouts {
        Connection.ExchangeTimeouts(head: head, total: total, read: nil, onTimeout: { timeouts.withLockedValue { $0 += 1 } })
    }

    /// A GET bound to `channel`, its deadlines armed as a session arms them (before the request is written), written.
    private static func send(
        _ timeouts: Connection.ExchangeTimeouts?, readTimeout: Duration? = nil, on channel: NIOAsyncTestingChannel
    ) async throws -> HTTPExchange {
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: ["host": "a.test"])
        let exchange = HTTPExchange(head: head, body: .none, channel: channel, readTimeout: readTimeout)
        if let timeouts {
            try await channel.testingEventLoop.executeInContext { exchange.armDeadlines(timeouts, on: channel.eventLoop) }
        }
        exchange.send(on: channel)
        await channel.testingEventLoop.run()
        while try await channel.readOutbound(as: IOData.self) != nil {}
        return exchange
    }

    private static func receive(_ text: String, on channel: NIOAsyncTestingChannel) async throws {
        try await channel.writeInbound(ByteBuffer(string: text))
    }

    /// The error that ended the body, nil if it ended normally.
    private static func bodyError(of exchange: HTTPExchange) async -> (any Error)? {
        do {
            for try await _ in exchange.bodyStream {}
            return nil
        } catch {
            return error
        }
    }

    // MARK: Cancelled when their end comes first

    @Test func aFinishedExchangeCancelsBothDeadlines() async throws {
        let channel = try await Self.http1Channel()
        let passed = NIOLockedValueBox(0)
        let exchange = try await Self.send(Self.timeouts(head: .seconds(10), total: .seconds(20), counting: passed), on: channel)
        try await Self.receive("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello", on: channel)
        #expect(try await exchange.ended.get())
        await channel.testingEventLoop.advanceTime(by: .seconds(60))
        #expect(passed.withLockedValue { $0 } == 0)
        #expect(channel.isActive)
    }

    @Test func aFinishedExchangeCancelsTheDeadlineCoveringHeadAndEnd() async throws {
        let channel = try await Self.http1Channel()
        let passed = NIOLockedValueBox(0)
        var timeouts = Self.timeouts(head: .seconds(20), total: .seconds(20), counting: passed)
        timeouts.totalCoversHead = true
        let exchange = try await Self.send(timeouts, on: channel)
        try await Self.receive("HTTP/1.1 204 No Content\r\n\r\n", on: channel)
        #expect(try await exchange.ended.get())
        await channel.testingEventLoop.advanceTime(by: .seconds(60))
        #expect(passed.withLockedValue { $0 } == 0)
        #expect(channel.isActive)
    }

    @Test func aDeliveredHeadCancelsItsDeadlineWhileTheBodyStreams() async throws {
        let channel = try await Self.http1Channel()
        let passed = NIOLockedValueBox(0)
        let exchange = try await Self.send(Self.timeouts(head: .seconds(10), total: nil, counting: passed), on: channel)
        try await Self.receive("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabcd", on: channel)
        #expect(try await exchange.responseHeadFuture.get().status == .ok)
        await channel.testingEventLoop.advanceTime(by: .seconds(60))
        #expect(passed.withLockedValue { $0 } == 0)
        #expect(channel.isActive)
        try await Self.receive("efghij", on: channel)
        #expect(try await exchange.ended.get())
    }

    @Test func deadlinesArmedAfterTheExchangeEndedNeverRun() async throws {
        let channel = try await Self.http1Channel()
        let passed = NIOLockedValueBox(0)
        let exchange = try await Self.send(nil, on: channel)
        exchange.abort(CancellationError())
        let timeouts = Self.timeouts(head: .seconds(10), total: .seconds(20), counting: passed)
        try await channel.testingEventLoop.executeInContext { exchange.armDeadlines(timeouts, on: channel.eventLoop) }
        await channel.testingEventLoop.advanceTime(by: .seconds(60))
        #expect(passed.withLockedValue { $0 } == 0)
        #expect(try await failure(of: exchange.ended) is CancellationError)
    }

    @Test func deadlinesArmedAfterAnUnboundExchangeFailedNeverRun() async throws {
        let loop = NIOAsyncTestingEventLoop()
        let passed = NIOLockedValueBox(0)
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: ["host": "a.test"])
        let exchange = HTTPExchange(head: head, body: .none, eventLoop: loop)
        exchange.fail(ConnectionClosedError())
        let timeouts = Self.timeouts(head: .seconds(10), total: .seconds(20), counting: passed)
        try await loop.executeInContext { exchange.armDeadlines(timeouts, on: loop) }
        await loop.advanceTime(by: .seconds(60))
        #expect(passed.withLockedValue { $0 } == 0)
        #expect(try await failure(of: exchange.responseHeadFuture) is ConnectionClosedError)
        await loop.shutdownGracefully()
    }

    @Test func aDeadlinePassingAfterTheEndDoesNothing() async throws {
        let channel = try await Self.http1Channel()
        let passed = NIOLockedValueBox(0)
        let exchange = try await Self.send(Self.timeouts(head: .seconds(10), total: .seconds(20), counting: passed), on: channel)
        try await Self.receive("HTTP/1.1 204 No Content\r\n\r\n", on: channel)
        #expect(try await exchange.ended.get())
        // A deadline already due as the response ended runs after its cancel.
        try await channel.testingEventLoop.executeInContext { exchange.deadlinePassed(total: true) }
        #expect(exchange.deadlineTimeouts == nil)
        #expect(passed.withLockedValue { $0 } == 0)
        #expect(channel.isActive)
    }

    // MARK: Passed first

    @Test func theHeadDeadlineFailsTheHeadAndClosesTheChannel() async throws {
        let channel = try await Self.http1Channel()
        let passed = NIOLockedValueBox(0)
        let exchange = try await Self.send(Self.timeouts(head: .seconds(10), total: .seconds(20), counting: passed), on: channel)
        await channel.testingEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive)
        await channel.testingEventLoop.advanceTime(by: .seconds(1))
        let error = try await failure(of: exchange.responseHeadFuture)
        #expect((error as? TrustHTTPClientError)?.code == .timedOut)
        #expect("\(error)".contains("the request timed out"))
        try await channel.closeFuture.get()
        await channel.testingEventLoop.advanceTime(by: .seconds(60))
        #expect(passed.withLockedValue { $0 } == 1)
    }

    @Test func theTotalDeadlineFailsAStreamingBodyAndClosesTheChannel() async throws {
        let channel = try await Self.http1Channel()
        let passed = NIOLockedValueBox(0)
        let exchange = try await Self.send(Self.timeouts(head: .seconds(10), total: .seconds(20), counting: passed), on: channel)
        try await Self.receive("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabcd", on: channel)
        #expect(try await exchange.responseHeadFuture.get().status == .ok)
        await channel.testingEventLoop.advanceTime(by: .seconds(19))
        #expect(channel.isActive && passed.withLockedValue { $0 } == 0)
        await channel.testingEventLoop.advanceTime(by: .seconds(1))
        let error = await Self.bodyError(of: exchange)
        #expect((error as? TrustHTTPClientError)?.code == .timedOut)
        #expect("\(error.map { "\($0)" } ?? "")".contains("the transfer timed out"))
        try await channel.closeFuture.get()
        #expect(passed.withLockedValue { $0 } == 1)
    }

    /// A deadline passing ends the exchange as it checks it has not ended, before it runs `onTimeout`: a
    /// cancellation landing after that check (here, from `onTimeout` itself) finds the exchange ended, so the
    /// outcome the session reports (timed out, as `onTimeout` told it) is the one the exchange fails with.
    @Test func aCancellationLandingAsTheDeadlinePassesDoesNotChangeItsOutcome() async throws {
        let channel = try await Self.http1Channel()
        let passed = NIOLockedValueBox(0)
        let cancel = NIOLockedValueBox<HTTPExchange?>(nil)
        let timeouts = Connection.ExchangeTimeouts(
            head: .seconds(10), total: nil, read: nil,
            onTimeout: {
                passed.withLockedValue { $0 += 1 }
                cancel.withLockedValue { $0 }?.abort(CancellationError())
            })
        let exchange = try await Self.send(timeouts, on: channel)
        cancel.withLockedValue { $0 = exchange }
        await channel.testingEventLoop.advanceTime(by: .seconds(10))
        let error = try await failure(of: exchange.responseHeadFuture)
        #expect(passed.withLockedValue { $0 } == 1)
        #expect((error as? TrustHTTPClientError)?.code == .timedOut, "\(error)")
        try await channel.closeFuture.get()
        cancel.withLockedValue { $0 = nil }
    }

    // MARK: The read timeout

    @Test func theReadTimeoutIsResetByEveryReadAndFailsAfterTheIdleInterval() async throws {
        let channel = try await Self.http1Channel()
        let exchange = try await Self.send(nil, readTimeout: .seconds(10), on: channel)
        try await Self.receive("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n", on: channel)
        for piece in ["ab", "cd", "ef"] {
            await channel.testingEventLoop.advanceTime(by: .seconds(8))
            try await Self.receive(piece, on: channel)
        }
        await channel.testingEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive)
        await channel.testingEventLoop.advanceTime(by: .seconds(1))
        let error = try await failure(of: exchange.ended)
        #expect((error as? TrustHTTPClientError)?.code == .timedOut)
        #expect("\(error)".contains("no data from the server for \(Duration.seconds(10)) (read timeout)"))
        try await channel.closeFuture.get()
    }

    @Test func theReadTimeoutIsCancelledWhenTheResponseEnds() async throws {
        let channel = try await Self.http1Channel()
        let exchange = try await Self.send(nil, readTimeout: .seconds(10), on: channel)
        await channel.testingEventLoop.advanceTime(by: .seconds(5))
        try await Self.receive("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello", on: channel)
        #expect(try await exchange.ended.get())
        await channel.testingEventLoop.advanceTime(by: .seconds(60))
        #expect(channel.isActive)
    }
}

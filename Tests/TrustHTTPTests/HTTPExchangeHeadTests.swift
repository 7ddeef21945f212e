import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import TrustHTTP

/// The wait for an exchange's response head (``HTTPExchange/responseHead()``, on the waiting task's own continuation):
/// whichever comes first — the head, a failure, the wait itself — the waiter hears once, of the first end.
@Suite("HTTPExchange: the wait for the response head")
struct HTTPExchangeHeadTests {
    private static func makeExchange() -> HTTPExchange {
        HTTPExchange(head: HTTPRequestHead(version: .http1_1, method: .GET, uri: "/"), body: .none, eventLoop: NIOAsyncTestingEventLoop())
    }

    private static let ok = HTTPResponseHead(version: .http1_1, status: .ok)

    /// Waits for the head in a task of its own, started before the exchange goes on.
    private static func waiting(for exchange: HTTPExchange) async -> Task<HTTPResponseHead, any Error> {
        let task = Task { try await exchange.responseHead() }
        // Give the task the time to start waiting; a head or failure before it is read from the state instead.
        for _ in 0..<100 { await Task.yield() }
        return task
    }

    @Test func aHeadThatArrivedBeforeTheWaitIsReturnedAtOnce() async throws {
        let exchange = Self.makeExchange()
        exchange.deliver(Self.ok)
        #expect(try await exchange.responseHead().status == .ok)
        #expect(try await exchange.responseHeadFuture.get().status == .ok)
    }

    @Test func aWaitEndsWithTheHead() async throws {
        let exchange = Self.makeExchange()
        let wait = await Self.waiting(for: exchange)
        exchange.deliver(Self.ok)
        #expect(try await wait.value.status == .ok)
    }

    @Test func aWaitEndsWithTheFailureBeforeTheHead() async throws {
        let exchange = Self.makeExchange()
        let wait = await Self.waiting(for: exchange)
        exchange.fail(ConnectionClosedError())
        await #expect(throws: ConnectionClosedError.self) { try await wait.value }
        await #expect(throws: ConnectionClosedError.self) { try await exchange.responseHead() }
    }

    @Test func aHeadAfterTheExchangeFailedIsNotItsAnswer() async throws {
        let exchange = Self.makeExchange()
        exchange.fail(CancellationError())  // a deadline passed while the head was on its way
        exchange.deliver(Self.ok)
        await #expect(throws: CancellationError.self) { try await exchange.responseHead() }
        await #expect(throws: CancellationError.self) { try await exchange.responseHeadFuture.get() }
    }

    @Test func aFailureAfterTheHeadLeavesTheHeadDelivered() async throws {
        let exchange = Self.makeExchange()
        let wait = await Self.waiting(for: exchange)
        let future = exchange.responseHeadFuture
        exchange.deliver(Self.ok)
        exchange.fail(ConnectionClosedError())  // the body failed afterwards
        #expect(try await wait.value.status == .ok)
        #expect(try await future.get().status == .ok)
        #expect(try await exchange.responseHead().status == .ok)
    }
}

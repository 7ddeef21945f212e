import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing
import TrustTestSupport

@testable import TrustHTTP

/// An HTTP/2 exchange is created before its stream, which opens in the same event-loop turn as the
/// request is written (`Connection.exchange`): what happens when it ends before, or after, that.
@Suite("HTTPExchange: binding to the channel it runs on", .paced)
struct HTTPExchangeBindingTests {
    private func makeExchange(on eventLoop: any EventLoop) -> HTTPExchange {
        HTTPExchange(head: HTTPRequestHead(version: .http1_1, method: .GET, uri: "/"), body: .none, eventLoop: eventLoop)
    }

    /// An active channel, as a connection or an open stream is.
    private func connectedChannel() async throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).get()
        return channel
    }

    @Test func anExchangeThatEndedBeforeItsStreamOpenedRefusesTheStream() async throws {
        let channel = try await connectedChannel()
        let exchange = makeExchange(on: channel.eventLoop)
        exchange.abort(CancellationError())  // a cancellation while the stream was opening
        #expect(try await failure(of: exchange.responseHeadFuture) is CancellationError)
        // The stream that opens afterwards is refused, and left open for the caller to close: nothing
        // of the exchange reaches it.
        #expect(!exchange.bind(channel))
        #expect(channel.isActive)
        _ = try channel.finish()
    }

    @Test func abortingABoundExchangeClosesItsChannel() async throws {
        let channel = try await connectedChannel()
        let exchange = makeExchange(on: channel.eventLoop)
        #expect(exchange.bind(channel))
        exchange.abort(CancellationError())
        channel.embeddedEventLoop.run()
        #expect(!channel.isActive)
        #expect(try await failure(of: exchange.ended) is CancellationError)
    }

    @Test func aReaderThatAbandonsTheBodyClosesTheBoundChannel() async throws {
        let channel = try await connectedChannel()
        let exchange = makeExchange(on: channel.eventLoop)
        #expect(exchange.bind(channel))
        // The reader drops the body stream before its end (its iterator's task is cancelled).
        let reader = Task { for try await _ in exchange.bodyStream {} }
        reader.cancel()
        _ = await reader.result
        channel.embeddedEventLoop.run()
        #expect(!channel.isActive)
        exchange.fail(ConnectionClosedError())  // as the handler does once its channel is closed
    }

    @Test func aBoundChannelResumesReadsOnceTheReaderCatchesUp() async throws {
        let channel = try await connectedChannel()
        let exchange = HTTPExchange(
            head: HTTPRequestHead(version: .http1_1, method: .GET, uri: "/"), body: .none, eventLoop: channel.eventLoop,
            flow: BodyFlowControl(highWatermark: 10, lowWatermark: 5))
        #expect(exchange.bind(channel))
        exchange.bodyProduced(20)
        #expect(!exchange.shouldRead())
        #expect(exchange.isHoldingReads)
        exchange.bodyConsumed(4)  // 16 left: above the low watermark, the read stays held
        #expect(exchange.isHoldingReads)
        exchange.bodyConsumed(12)
        channel.embeddedEventLoop.run()
        #expect(!exchange.isHoldingReads)
        #expect(exchange.bufferedBytes == 4)
        #expect(exchange.shouldRead())
        exchange.fail(ConnectionClosedError())
        _ = try channel.finish()
    }
}

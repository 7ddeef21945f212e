import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// One request and its response, handed to an ``HTTPExchangeHandler``.
final class HTTPExchange: Sendable {
    let head: HTTPRequestHead
    let body: ByteBuffer?
    let responseHead: EventLoopPromise<HTTPResponseHead>
    let bodyContinuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
    let bodyStream: AsyncThrowingStream<[UInt8], any Error>
    /// Succeeds with whether the connection may be reused once the response has ended.
    let completion: EventLoopPromise<Bool>
    let flow: BodyFlowControl

    private let ended = NIOLockedValueBox(false)
    private let reusable = NIOLockedValueBox(false)

    /// Whether the response ended normally on a connection that may be reused (known once the body has ended).
    var endedReusable: Bool { reusable.withLockedValue { $0 } }

    /// - Parameter channel: closed if the reader abandons the body before its end (the rest of the
    ///   response would otherwise block the connection).
    init(head: HTTPRequestHead, body: ByteBuffer?, channel: any Channel) {
        self.head = head
        self.body = body
        self.responseHead = channel.eventLoop.makePromise()
        self.completion = channel.eventLoop.makePromise()
        self.flow = BodyFlowControl(channel: channel)
        (self.bodyStream, self.bodyContinuation) = AsyncThrowingStream.makeStream(of: [UInt8].self)
        let ended = self.ended
        self.bodyContinuation.onTermination = { termination in
            if case .cancelled = termination, !ended.withLockedValue({ $0 }) {
                channel.close(promise: nil)
            }
        }
    }

    /// Marks the exchange ended; false if it already was.
    private func markEnded() -> Bool {
        ended.withLockedValue { flag in
            defer { flag = true }
            return !flag
        }
    }

    /// The response ended normally.
    func finish(keepAlive: Bool) {
        guard markEnded() else { return }
        reusable.withLockedValue { $0 = keepAlive }
        bodyContinuation.finish()
        completion.succeed(keepAlive)
    }

    /// The response failed; only the first end (normal or failed) counts.
    func fail(_ error: any Error, headDelivered: Bool) {
        guard markEnded() else { return }
        if !headDelivered { responseHead.fail(error) }
        bodyContinuation.finish(throwing: error)
        completion.fail(error)
    }
}

/// The connection closed before the response was complete.
struct ConnectionClosedError: Error, CustomStringConvertible {
    var description: String { "the connection closed before the response was complete" }
}

/// Writes one ``HTTPExchange`` at a time and feeds the response back to it. Sits at the end of an
/// HTTP/1.1 client pipeline or of an HTTP/2 stream channel (behind NIOHTTP2's HTTP/1 codec).
final class HTTPExchangeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPExchange
    typealias OutboundOut = HTTPClientRequestPart

    private var current: HTTPExchange?
    private var responseHead: HTTPResponseHead?

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let exchange = unwrapOutboundIn(data)
        guard current == nil else {
            exchange.fail(ConnectionClosedError(), headDelivered: false)
            promise?.fail(ConnectionClosedError())
            return
        }
        guard context.channel.isActive else {
            exchange.fail(ConnectionClosedError(), headDelivered: false)
            promise?.fail(ConnectionClosedError())
            return
        }
        current = exchange
        context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
        if let body = exchange.body, body.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let exchange = current else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            // Interim responses (100 Continue, 103 Early Hints) are not the response.
            if head.status.code >= 100 && head.status.code < 200 && head.status != .switchingProtocols { return }
            responseHead = head
            exchange.responseHead.succeed(head)
        case .body(let buffer):
            exchange.flow.produced(buffer.readableBytes)
            exchange.bodyContinuation.yield(Array(buffer.readableBytesView))
        case .end:
            let keepAlive = responseHead?.isKeepAlive ?? false
            current = nil
            responseHead = nil
            exchange.finish(keepAlive: keepAlive)
        }
    }

    /// Holds the socket read while the reader is behind (see ``BodyFlowControl``).
    func read(context: ChannelHandlerContext) {
        if let exchange = current, !exchange.flow.shouldRead() { return }
        context.read()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failCurrent(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failCurrent(ConnectionClosedError())
        context.fireChannelInactive()
    }

    private func failCurrent(_ error: any Error) {
        guard let exchange = current else { return }
        current = nil
        exchange.fail(error, headDelivered: responseHead != nil)
        responseHead = nil
    }
}

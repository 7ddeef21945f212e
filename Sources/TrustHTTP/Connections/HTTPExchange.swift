import Foundation
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
    /// The request's URL, for errors raised inside the pipeline.
    let url: URL?
    /// The longest wait for the next bytes of the response while the reader wants them (nil: none).
    let readTimeout: Duration?
    /// The response limits (interim responses are counted per exchange).
    let limits: ResponseLimits

    private struct State {
        var ended = false
        var headDelivered = false
        var reusable = false
    }

    private let state = NIOLockedValueBox(State())
    private let channel: any Channel

    /// Whether the response ended normally on a connection that may be reused (known once the body has ended).
    var endedReusable: Bool { state.withLockedValue { $0.reusable } }

    /// - Parameter channel: closed if the reader abandons the body before its end (the rest of the
    ///   response would otherwise block the connection).
    init(head: HTTPRequestHead, body: ByteBuffer?, channel: any Channel, url: URL? = nil, readTimeout: Duration? = nil, limits: ResponseLimits = ResponseLimits()) {
        self.head = head
        self.body = body
        self.url = url
        self.readTimeout = readTimeout
        self.limits = limits
        self.channel = channel
        self.responseHead = channel.eventLoop.makePromise()
        self.completion = channel.eventLoop.makePromise()
        self.flow = BodyFlowControl(channel: channel)
        (self.bodyStream, self.bodyContinuation) = AsyncThrowingStream.makeStream(of: [UInt8].self)
        let state = self.state
        self.bodyContinuation.onTermination = { termination in
            if case .cancelled = termination, !state.withLockedValue({ $0.ended }) {
                channel.close(promise: nil)
            }
        }
    }

    /// Marks the exchange ended; false if it already was.
    private func markEnded() -> Bool {
        state.withLockedValue { state in
            defer { state.ended = true }
            return !state.ended
        }
    }

    /// Writes the request on `channel` (on its event loop). A channel that closed before this write
    /// (a TLS 1.3 server refusing the client certificate right after the handshake, say) has
    /// already dropped its handlers: the write then fails at the head of the pipeline and only its
    /// promise hears of it, so that failure ends the exchange.
    func send(on channel: any Channel) {
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { error in
            if let channelError = error as? ChannelError, channelError == .ioOnClosedChannel {
                self.fail(ConnectionClosedError())
            }
        }
        channel.writeAndFlush(self, promise: written)
    }

    /// The final response head arrived.
    func deliver(_ head: HTTPResponseHead) {
        state.withLockedValue { $0.headDelivered = true }
        responseHead.succeed(head)
    }

    /// The response ended normally.
    func finish(keepAlive: Bool) {
        guard markEnded() else { return }
        state.withLockedValue { $0.reusable = keepAlive }
        bodyContinuation.finish()
        completion.succeed(keepAlive)
    }

    /// The response failed; only the first end (normal or failed) counts. Whoever waits — for the
    /// head or for the next body bytes — hears of it at once, before the connection has finished
    /// closing (a TLS close waits for the peer's close_notify, which a hostile peer never sends).
    func fail(_ error: any Error) {
        guard markEnded() else { return }
        if !state.withLockedValue({ $0.headDelivered }) { responseHead.fail(error) }
        bodyContinuation.finish(throwing: error)
        completion.fail(error)
    }

    /// Fails the exchange with `error` and closes its channel (a limit or deadline reached, the
    /// reader gone): the rest of the response is never read.
    func abort(_ error: any Error) {
        fail(error)
        channel.close(promise: nil)
    }
}

/// The connection closed before the response was complete.
struct ConnectionClosedError: Error, CustomStringConvertible {
    /// Closed under an HTTP/2 stream (the stream ended without END_STREAM) rather than an
    /// HTTP/1.1 connection closing in order.
    var isHTTP2Stream = false
    var description: String {
        isHTTP2Stream ? "the HTTP/2 stream closed before the response was complete" : "the connection closed before the response was complete"
    }
}

/// Writes one ``HTTPExchange`` at a time and feeds the response back to it. Sits at the end of an
/// HTTP/1.1 client pipeline or of an HTTP/2 stream channel (behind NIOHTTP2's HTTP/1 codec).
final class HTTPExchangeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPExchange
    typealias OutboundOut = HTTPClientRequestPart

    private var current: HTTPExchange?
    private var responseHead: HTTPResponseHead?
    private var informational = 0
    /// When bytes of the current response last arrived (or the reader last asked for more).
    private var lastActivity = NIODeadline.now()
    private var idleCheck: Scheduled<Void>?
    /// Body bytes of the current read cycle, handed to the reader in one piece when the cycle ends
    /// (`channelReadComplete`), before the response ends or fails, or at ``bodyChunkLimit``: one socket
    /// read carries several TLS records, and each piece handed over wakes the reading task once.
    private var pendingBody: [UInt8] = []
    /// At the end of an HTTP/2 stream channel's pipeline (not an HTTP/1.1 connection's).
    private let isHTTP2Stream: Bool

    init(isHTTP2Stream: Bool = false) {
        self.isHTTP2Stream = isHTTP2Stream
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let exchange = unwrapOutboundIn(data)
        guard current == nil, context.channel.isActive else {
            exchange.fail(ConnectionClosedError())
            promise?.fail(ConnectionClosedError())
            return
        }
        current = exchange
        informational = 0
        context.triggerUserOutboundEvent(ResponseHeadLimiter.ExpectResponse(), promise: nil)
        context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
        if let body = exchange.body, body.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: promise)
        if let readTimeout = exchange.readTimeout {
            lastActivity = .now()
            scheduleIdleCheck(context: context, exchange: exchange, in: readTimeout)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let exchange = current else { return }
        lastActivity = .now()
        switch unwrapInboundIn(data) {
        case .head(let head):
            // Interim responses (100 Continue, 103 Early Hints) are not the response.
            if head.status.code >= 100 && head.status.code < 200 && head.status != .switchingProtocols {
                informational += 1
                let maximum = exchange.limits.maximumInformationalResponses
                if informational > maximum {
                    fail(ResponseLimitExceeded(limit: ResponseLimit(.informationalResponses, observed: informational, limit: maximum)), context: context)
                }
                return
            }
            responseHead = head
            exchange.deliver(head)
        case .body(let buffer):
            exchange.flow.produced(buffer.readableBytes)
            pendingBody.append(contentsOf: buffer.readableBytesView)
            if pendingBody.count >= Self.bodyChunkLimit { deliverPendingBody() }
        case .end:
            let keepAlive = responseHead?.isKeepAlive ?? false
            deliverPendingBody()
            endCurrent()
            exchange.finish(keepAlive: keepAlive)
        }
    }

    /// The most body bytes held before they are handed over within one read cycle.
    static let bodyChunkLimit = 256 * 1024

    func channelReadComplete(context: ChannelHandlerContext) {
        deliverPendingBody()
        context.fireChannelReadComplete()
    }

    /// Hands the body bytes of this read cycle to the reader.
    private func deliverPendingBody() {
        guard !pendingBody.isEmpty else { return }
        if let exchange = current { exchange.bodyContinuation.yield(pendingBody) }
        // No capacity kept: an idle pooled connection holds no buffer, and the next piece is allocated
        // at its own size.
        pendingBody = []
    }

    /// Holds the socket read while the reader is behind (see ``BodyFlowControl``).
    func read(context: ChannelHandlerContext) {
        if let exchange = current, !exchange.flow.shouldRead() { return }
        context.read()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ResponseHeadLimiter.HeadBytesArrived {
            lastActivity = .now()
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failCurrent(ConnectionClosedError(isHTTP2Stream: isHTTP2Stream))
        context.fireChannelInactive()
    }

    private func fail(_ error: any Error, context: ChannelHandlerContext) {
        failCurrent(error)
        context.close(promise: nil)
    }

    private func failCurrent(_ error: any Error) {
        guard let exchange = current else { return }
        deliverPendingBody()  // what arrived before the failure is the body's, as it would have been without holding it
        endCurrent()
        exchange.fail(error)
    }

    private func endCurrent() {
        current = nil
        responseHead = nil
        idleCheck?.cancel()
        idleCheck = nil
    }

    /// The read timeout: checked when it could have run out, re-armed for what is left while bytes
    /// keep arriving; not counted while the reader is behind (the channel is not reading then).
    private func scheduleIdleCheck(context: ChannelHandlerContext, exchange: HTTPExchange, in delay: Duration) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        idleCheck = context.eventLoop.scheduleTask(in: .nanoseconds(delay.nanoseconds)) {
            let (handler, context) = loopBound.value
            guard handler.current === exchange, let readTimeout = exchange.readTimeout else { return }
            let limit = TimeAmount.nanoseconds(readTimeout.nanoseconds)
            let idle = NIODeadline.now() - handler.lastActivity
            if exchange.flow.isHoldingReads {
                // The reader is behind: the wait for the peer starts again once it catches up.
                handler.lastActivity = .now()
                handler.scheduleIdleCheck(context: context, exchange: exchange, in: readTimeout)
                return
            }
            if idle < limit {
                let next = limit - idle
                handler.scheduleIdleCheck(context: context, exchange: exchange, in: .nanoseconds(next.nanoseconds))
                return
            }
            handler.fail(SessionError(.timedOut, "no data from the server for \(readTimeout) (read timeout)", url: exchange.url), context: context)
        }
    }
}

import NIOCore
import NIOHTTP1

/// Writes one ``HTTPExchange`` at a time and feeds the response back to it. Sits at the end of an
/// HTTP/1.1 client pipeline or of an HTTP/2 stream channel (behind NIOHTTP2's HTTP/1 codec).
final class HTTPExchangeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPExchange
    typealias OutboundOut = HTTPClientRequestPart

    private var current: HTTPExchange?
    private var responseHead: HTTPResponseHead?
    private var informational = 0
    /// An HTTP/2 response that has no content (``hasNoContent(_:)``) whose head has arrived: complete at the
    /// end of this read cycle, whether or not its stream has ended.
    private var contentlessHeadArrived = false
    /// When bytes of the current response last arrived (or the reader last asked for more).
    private var lastActivity = NIODeadline.now()
    private var idleCheck: Scheduled<Void>?
    /// Body bytes of the current read cycle, handed to the reader in one piece when the cycle ends
    /// (`channelReadComplete`), before the response ends or fails, or at ``bodyChunkLimit``: one socket
    /// read carries several TLS records, and each piece handed over wakes the reading task once.
    private var pendingBody: [UInt8] = []
    /// At the end of an HTTP/2 stream channel's pipeline (not an HTTP/1.1 connection's).
    private let isHTTP2Stream: Bool
    /// Where the current request's body stands.
    private var sending = Sending.complete
    /// Bytes of the current streamed body written so far.
    private var bodyBytesWritten = 0

    private enum Sending {
        /// The request has been written in full.
        case complete
        /// The head is written; the body waits for `100 Continue` or this timer (RFC 9110 §10.1.1).
        case waitingForContinue(Scheduled<Void>)
        /// The body streams from this task (see ``streamBody(_:length:of:context:)``).
        case streaming(Task<Void, Never>)
        /// The final response came before the body was sent: the body is not sent.
        case abandoned
    }

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
        if let wait = exchange.continueTimeout, exchange.body.hasContent {
            // The head alone; the body once the server says `100 Continue`, or without an answer
            // after `wait` — a client must not wait for it indefinitely (RFC 9110 §10.1.1).
            context.writeAndFlush(wrapOutboundOut(.head(exchange.head)), promise: promise)
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            sending = .waitingForContinue(
                context.eventLoop.scheduleTask(in: .nanoseconds(wait.nanoseconds)) {
                    let (handler, context) = loopBound.value
                    guard handler.current === exchange, case .waitingForContinue = handler.sending else { return }
                    handler.sendBody(of: exchange, context: context, promise: nil)
                })
        } else if case .stream = exchange.body {
            context.writeAndFlush(wrapOutboundOut(.head(exchange.head)), promise: promise)
            sendBody(of: exchange, context: context, promise: nil)
        } else {
            context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
            sendBody(of: exchange, context: context, promise: promise)
        }
        if let readTimeout = exchange.readTimeout {
            lastActivity = .now()
            scheduleIdleCheck(context: context, exchange: exchange, in: readTimeout)
        }
    }

    /// Writes the body and the end of the request (the head is written). A streamed body is written
    /// by a task of its own as the connection takes it (see ``streamBody(_:length:of:context:)``).
    private func sendBody(of exchange: HTTPExchange, context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        switch exchange.body {
        case .none:
            sending = .complete
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: promise)
        case .bytes(let bytes):
            sending = .complete
            if exchange.uploadProgress != nil {
                let count = bytes.readableBytes
                context.write(wrapOutboundOut(.body(.byteBuffer(bytes)))).whenSuccess { exchange.bodyWritten(count) }
            } else {
                context.write(wrapOutboundOut(.body(.byteBuffer(bytes))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: promise)
        case .stream(let writeAll, let length):
            context.flush()
            promise?.succeed()
            bodyBytesWritten = 0
            sending = .streaming(streamBody(writeAll, length: length, of: exchange, context: context))
        }
    }

    /// A write the connection refused: the channel is failing, and its own error (or its closing)
    /// ends the exchange.
    private struct BodyWriteFailed: Error {}
    /// The exchange ended (its response came in full, it failed or was cancelled) before the body did.
    private struct BodyNoLongerWanted: Error {}

    /// Sends a streamed body from a task: each chunk is handed to the event loop as the source yields
    /// it, without waiting for its write, while less than the ``UploadWindow``'s limit waits to be
    /// written; beyond it the task waits for the connection (its socket, or the HTTP/2 stream's
    /// flow-control window), so the body is read no faster than the peer takes it. A sequence that
    /// throws, or yields other than its declared `length`, fails the exchange: the request cannot be
    /// completed, and the connection closes (a peer must never read the wrong bytes as the body,
    /// RFC 9112 §6.3).
    private func streamBody(_ writeAll: @escaping RequestBody.Writer, length: Int?, of exchange: HTTPExchange, context: ChannelHandlerContext) -> Task<
        Void, Never
    > {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        let window = UploadWindow()
        return Task {
            var sent = 0
            do {
                exchange.recordUpload { $0.askingSource() }
                try await writeAll { chunk in
                    sent += chunk.readableBytes
                    if let length, sent > length {
                        throw SessionError(
                            .requestBodyStreamExhausted, "the request body yielded more than its declared length of \(length) bytes", url: exchange.url)
                    }
                    try await window.reserve(chunk.readableBytes) { exchange.recordUpload { $0.waitingForConnection() } }
                    eventLoop.execute {
                        let (handler, context) = loopBound.value
                        handler.writeBodyPart(chunk, of: exchange, window: window, context: context)
                    }
                    exchange.recordUpload { $0.askingSource() }
                }
                if let length, sent != length {
                    throw SessionError(.requestBodyStreamExhausted, "the request body ended after \(sent) of its declared \(length) bytes", url: exchange.url)
                }
                try await eventLoop.flatSubmit {
                    let (handler, context) = loopBound.value
                    return handler.endBody(of: exchange, context: context)
                }.get()
            } catch {
                eventLoop.execute {
                    let (handler, context) = loopBound.value
                    handler.bodyFailed(error, of: exchange, context: context)
                }
            }
        }
    }

    /// Writes one chunk handed over by the body's task (in the order handed over: the event loop runs
    /// its tasks in order), and gives its room in `window` back once the connection has taken it.
    private func writeBodyPart(_ chunk: ByteBuffer, of exchange: HTTPExchange, window: UploadWindow, context: ChannelHandlerContext) {
        guard current === exchange, case .streaming = sending else {
            window.fail(BodyNoLongerWanted())
            return
        }
        let count = chunk.readableBytes
        bodyBytesWritten += count
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(chunk)))).whenComplete { result in
            switch result {
            case .success:
                // The peer is taking the request, which the read timeout counts as activity as it
                // counts bytes of the response (of this exchange only: the connection may have
                // moved on to the next one).
                if handler.value.current === exchange { handler.value.lastActivity = .now() }
                window.written(count)
                exchange.bodyWritten(count)
            case .failure:
                window.fail(BodyWriteFailed())
            }
        }
    }

    private func endBody(of exchange: HTTPExchange, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        guard current === exchange, case .streaming = sending else { return context.eventLoop.makeFailedFuture(BodyNoLongerWanted()) }
        sending = .complete
        exchange.recordUpload { $0.waitingForConnection() }
        return context.writeAndFlush(wrapOutboundOut(.end(nil))).map {
            exchange.recordUpload { $0.finished() }
        }.flatMapErrorThrowing { _ in throw BodyWriteFailed() }
    }

    private func bodyFailed(_ error: any Error, of exchange: HTTPExchange, context: ChannelHandlerContext) {
        guard current === exchange, case .streaming = sending, !(error is BodyWriteFailed), !(error is BodyNoLongerWanted) else { return }
        let failure =
            error as? SessionError
            ?? SessionError(.requestBodyStreamExhausted, "the request body failed: \(error)", url: exchange.url, underlyingError: error)
        fail(failure, context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let exchange = current else { return }
        lastActivity = .now()
        switch unwrapInboundIn(data) {
        case .head(let head): receiveHead(head, of: exchange, context: context)
        case .body(let buffer): receiveBody(buffer, of: exchange)
        case .end: receiveEnd(of: exchange, context: context)
        }
    }

    /// A response head: an interim one (``receiveInformational(_:of:context:)``) or the response's.
    @inline(__always)
    private func receiveHead(_ head: HTTPResponseHead, of exchange: HTTPExchange, context: ChannelHandlerContext) {
        // Interim responses (100 Continue, 103 Early Hints) are not the response.
        if head.status.code >= 100 && head.status.code < 200 && head.status != .switchingProtocols {
            receiveInformational(head, of: exchange, context: context)
            return
        }
        if case .waitingForContinue(let timer) = sending {
            // A final answer before the body (a 401, a 413, a 417): the body is not sent.
            timer.cancel()
            sending = .abandoned
        }
        responseHead = head
        exchange.deliver(head)
        if isHTTP2Stream, hasNoContent(exchange) { contentlessHeadArrived = true }
    }

    /// An interim 1xx head: counted against ``ResponseLimits/maximumInformationalResponses``; a
    /// `100 Continue` the body waits for sends it (RFC 9110 §10.1.1).
    private func receiveInformational(_ head: HTTPResponseHead, of exchange: HTTPExchange, context: ChannelHandlerContext) {
        informational += 1
        let maximum = exchange.limits.maximumInformationalResponses
        if informational > maximum {
            fail(ResponseLimitExceeded(limit: ResponseLimit(.informationalResponses, observed: informational, limit: maximum)), context: context)
        } else if head.status == .continue, case .waitingForContinue(let timer) = sending {
            timer.cancel()
            sendBody(of: exchange, context: context, promise: nil)
        }
    }

    /// Body bytes: held until the read cycle ends or ``bodyChunkLimit`` is reached.
    @inline(__always)
    private func receiveBody(_ buffer: ByteBuffer, of exchange: HTTPExchange) {
        // A response without content (to HEAD, a 204, a 304; RFC 9110 §6.4.1) has none whatever DATA frames
        // a server sends on its HTTP/2 stream: they are dropped as they come, so that the stream's window
        // keeps opening and its end arrives (held, they would stall a server with more than a window to
        // send, and the request with it). HTTP/1.1's decoder knows these answers have no body.
        if isHTTP2Stream, hasNoContent(exchange) { return }
        exchange.flow.produced(buffer.readableBytes)
        pendingBody.append(contentsOf: buffer.readableBytesView)
        if pendingBody.count >= Self.bodyChunkLimit { deliverPendingBody() }
    }

    /// The end of the response: the exchange finishes, keeping the connection only when the request
    /// was sent in full too.
    @inline(__always)
    private func receiveEnd(of exchange: HTTPExchange, context: ChannelHandlerContext) {
        contentlessHeadArrived = false
        // A request not sent in full leaves the connection in no known state: HTTP/1.1 closes it
        // (the server may read what was not sent as the next request, RFC 9110 §10.1.1); an
        // HTTP/2 stream is reset (RFC 9113 §8.1: a complete response may come before the request).
        let requestComplete = isRequestComplete(exchange)
        let keepAlive = (responseHead?.isKeepAlive ?? false) && requestComplete
        deliverPendingBody()
        endCurrent()
        exchange.finish(keepAlive: keepAlive)
        if !requestComplete && isHTTP2Stream { context.close(promise: nil) }
    }

    /// Whether the request is on the wire in full. A body of declared length whose every byte is written
    /// is complete, though its task has not yet seen its sequence end (the server may answer as soon as the
    /// last byte is in).
    @inline(__always)
    private func isRequestComplete(_ exchange: HTTPExchange) -> Bool {
        switch sending {
        case .complete: true
        case .streaming:
            if !isHTTP2Stream, case .stream(_, let length?) = exchange.body { length == bodyBytesWritten } else { false }
        case .waitingForContinue, .abandoned: false
        }
    }

    /// Whether the response has no content whatever its framing says: to HEAD, a 204, a 304 (RFC 9110 §6.4.1).
    private func hasNoContent(_ exchange: HTTPExchange) -> Bool {
        exchange.head.method == .HEAD || responseHead.map { $0.status.code == 204 || $0.status.code == 304 } == true
    }

    /// The most body bytes held before they are handed over within one read cycle.
    static let bodyChunkLimit = 256 * 1024

    func channelReadComplete(context: ChannelHandlerContext) {
        deliverPendingBody()
        if contentlessHeadArrived {
            // The head of an answer without content came in this read cycle, and its stream has not ended with it
            // (a server sending content after a HEAD's answer, which its own HTTP/2 stack may refuse to send,
            // never ending the stream): the response is complete, as curl takes it; the stream is reset.
            contentlessHeadArrived = false
            if let exchange = current {
                endCurrent()
                exchange.finish(keepAlive: false)
                context.close(promise: nil)
            }
        }
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
        switch sending {
        case .waitingForContinue(let timer): timer.cancel()
        case .streaming(let task): task.cancel()
        case .complete, .abandoned: break
        }
        sending = .complete
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
            handler.fail(
                SessionError(.timedOut, exchange.timeoutMessage("no data from the server for \(readTimeout) (read timeout)"), url: exchange.url),
                context: context)
        }
    }
}

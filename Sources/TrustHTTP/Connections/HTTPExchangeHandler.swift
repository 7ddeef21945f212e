import NIOCore
import NIOHTTP1

/// Writes one ``HTTPExchange`` at a time and feeds the response back to it. Sits at the end of an
/// HTTP/1.1 client pipeline (``HTTP1ExchangeHandler``) or of an HTTP/2 stream channel, where it reads and writes the
/// stream's frames itself (``HTTP2ExchangeHandler``; behind ``HTTP2ExchangeCodec`` when a decompressor sits between).
///
/// The driver of an ``HTTPRequestStateMachine``, which decides: the handler feeds it the channel's events (and
/// those of its own timers and of the body's task, tagged with the request they belong to) and carries out its
/// actions. It holds what the machine cannot: the exchange, the `100 Continue` and read timers, the body's task.
/// Time is the event loop's (`EventLoop.now`): a test loop's clock runs the timeouts.
final class HTTPExchangeHandler<Framing: ExchangeFraming>: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = Framing.Inbound
    typealias OutboundIn = HTTPExchange
    typealias OutboundOut = Framing.Outbound
    private typealias Machine = HTTPRequestStateMachine

    private var machine: Machine
    /// The channel's messages to and from the request's and response's parts.
    private var framing = Framing()
    /// The exchange of the machine's current request.
    private var current: HTTPExchange?
    /// The wait for `100 Continue` (RFC 9110 §10.1.1), while it runs.
    private var continueTimer: Scheduled<Void>?
    /// The task that streams the body (see ``streamBody(_:length:id:of:context:)``), until it has written the end.
    private var bodyTask: Task<Void, Never>?
    /// The read timeout's next check.
    private var readTimer: NIOScheduledCallback?
    /// At the end of an HTTP/2 stream channel's pipeline (not an HTTP/1.1 connection's).
    private let isHTTP2Stream: Bool
    /// The exchange this handler sends once its channel is active (an HTTP/2 stream made for it), until then.
    private var sendingWhenActive: HTTPExchange?

    /// - Parameter sendingWhenActive: an exchange to bind to the channel and send once it is active (an HTTP/2 stream
    ///   made for it: ``Connection``'s `openStream`); one that has ended by then closes the channel instead, and a
    ///   channel that closes or loses this handler first fails it.
    init(isHTTP2Stream: Bool = false, sendingWhenActive: HTTPExchange? = nil) {
        self.isHTTP2Stream = isHTTP2Stream
        self.sendingWhenActive = sendingWhenActive
        self.machine = Machine(isHTTP2Stream: isHTTP2Stream)
    }

    /// The most body bytes held before they are handed over within one read cycle.
    static var bodyChunkLimit: Int { Machine.bodyChunkLimit }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        send(unwrapOutboundIn(data), context: context, promise: promise)
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        guard let exchange = sendingWhenActive.take() else { return }
        if exchange.bind(context.channel) {
            send(exchange, context: context, promise: nil)
        } else {
            context.close(promise: nil)
        }
    }

    /// A handler made for a stream whose set-up never ran (its connection closed first: swift-nio-http2 drops the
    /// initializer and reports only to a promise, which ``Connection/openStream(for:on:connection:decompression:)``
    /// does not make) fails the exchange it was to send.
    deinit {
        failUnsent()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        failUnsent()
    }

    /// Fails the exchange this handler was to send, if it has not: its channel closed or lost the handler first.
    private func failUnsent() {
        sendingWhenActive.take()?.fail(ConnectionClosedError(isHTTP2Stream: isHTTP2Stream))
    }

    /// Starts `exchange`: its head, and its body as the machine decides.
    private func send(_ exchange: HTTPExchange, context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        let start = machine.start(Machine.Request(exchange), channelIsActive: context.channel.isActive, now: context.eventLoop.now)
        guard case .start(let id, let sending, let readTimeout) = start else {
            exchange.fail(ConnectionClosedError())
            promise?.fail(ConnectionClosedError())
            return
        }
        current = exchange
        context.triggerUserOutboundEvent(ResponseHeadLimiter.ExpectResponse(), promise: nil)
        switch sending {
        // A head the framing refuses has ended the exchange: nothing more is written.
        case .headAwaitingContinue(let wait):
            if writeAndFlush(.head(exchange.head), promise: promise, context: context) != nil { return }
            scheduleContinueTimer(id, in: wait, context: context)
        case .headThenStream:
            if writeAndFlush(.head(exchange.head), promise: promise, context: context) != nil { return }
            sendBody(.stream, of: exchange, context: context, promise: nil)
        case .whole:
            if let refused = write(.head(exchange.head), promise: nil, context: context) {
                promise?.fail(refused)
                return
            }
            sendBody(.bytesAndEnd, of: exchange, context: context, promise: promise)
        }
        if let readTimeout { scheduleReadTimer(id, in: readTimeout, context: context) }
    }

    /// Writes the body and the end of the request (the head is written). A streamed body is written
    /// by a task of its own as the connection takes it (see ``streamBody(_:length:id:of:context:)``).
    private func sendBody(_ sending: Machine.BodySending, of exchange: HTTPExchange, context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        switch (sending, exchange.body) {
        case (.stream, .stream(let writeAll, let length)):
            guard let id = machine.current?.id else { return }
            flush(context: context)
            promise?.succeed()
            bodyTask = streamBody(writeAll, length: length, id: id, of: exchange, context: context)
        case (_, .bytes(let bytes)):
            if exchange.uploadProgress != nil {
                let count = bytes.readableBytes
                let written = context.eventLoop.makePromise(of: Void.self)
                write(.body(.byteBuffer(bytes)), promise: written, context: context)
                written.futureResult.whenSuccess { exchange.bodyWritten(count) }
            } else {
                write(.body(.byteBuffer(bytes)), promise: nil, context: context)
            }
            writeAndFlush(.end(nil), promise: promise, context: context)
        case (_, .none):
            writeAndFlush(.end(nil), promise: promise, context: context)
        case (.bytesAndEnd, .stream):
            // The machine sends a streamed body as `.stream` only. Were it told otherwise, writing the end alone
            // would leave a request shorter than its head declares (RFC 9112 §6.3): the request fails instead,
            // and the connection, its head written, closes.
            assertionFailure("a streamed request body was to be written whole")
            let failure = TrustHTTPClientError(.requestBodyStreamExhausted, "the request body could not be sent", url: exchange.url)
            promise?.fail(failure)
            perform(machine.failCurrent(.requestBodyFailed, close: true), context: context, cause: failure)
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
    private func streamBody(
        _ writeAll: @escaping TrustHTTPClientRequest.Body.Writer, length: Int?, id: Machine.RequestID, of exchange: HTTPExchange, context: ChannelHandlerContext
    ) -> Task<Void, Never> {
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
                        throw TrustHTTPClientError(
                            .requestBodyStreamExhausted, "the request body yielded more than its declared length of \(length) bytes", url: exchange.url)
                    }
                    try await window.reserve(chunk.readableBytes) { exchange.recordUpload { $0.waitingForConnection() } }
                    eventLoop.execute {
                        let (handler, context) = loopBound.value
                        handler.writeBodyPart(chunk, id: id, of: exchange, window: window, context: context)
                    }
                    exchange.recordUpload { $0.askingSource() }
                }
                if let length, sent != length {
                    throw TrustHTTPClientError(
                        .requestBodyStreamExhausted, "the request body ended after \(sent) of its declared \(length) bytes", url: exchange.url)
                }
                try await eventLoop.flatSubmit {
                    let (handler, context) = loopBound.value
                    return handler.endBody(id: id, of: exchange, context: context)
                }.get()
            } catch {
                eventLoop.execute {
                    let (handler, context) = loopBound.value
                    handler.bodyFailed(error, id: id, of: exchange, context: context)
                }
            }
        }
    }

    /// Writes one chunk handed over by the body's task (in the order handed over: the event loop runs
    /// its tasks in order), and gives its room in `window` back once the connection has taken it.
    private func writeBodyPart(_ chunk: ByteBuffer, id: Machine.RequestID, of exchange: HTTPExchange, window: UploadWindow, context: ChannelHandlerContext) {
        let count = chunk.readableBytes
        guard machine.bodyPartReady(id, count: count) else {
            window.fail(BodyNoLongerWanted())
            return
        }
        let eventLoop = context.eventLoop
        let handler = NIOLoopBound(self, eventLoop: eventLoop)
        writeAndFlush(.body(.byteBuffer(chunk)), context: context).whenComplete { result in
            switch result {
            case .success:
                handler.value.machine.bodyPartWritten(id, now: eventLoop.now)
                window.written(count)
                exchange.bodyWritten(count)
            case .failure:
                window.fail(BodyWriteFailed())
            }
        }
    }

    private func endBody(id: Machine.RequestID, of exchange: HTTPExchange, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        guard machine.bodyEndReady(id) else { return context.eventLoop.makeFailedFuture(BodyNoLongerWanted()) }
        bodyTask = nil  // it ends with this write: nothing of it is left to cancel
        exchange.recordUpload { $0.waitingForConnection() }
        return writeAndFlush(.end(nil), context: context).map {
            exchange.recordUpload { $0.finished() }
        }.flatMapErrorThrowing { _ in throw BodyWriteFailed() }
    }

    private func bodyFailed(_ error: any Error, id: Machine.RequestID, of exchange: HTTPExchange, context: ChannelHandlerContext) {
        let ending = machine.bodyFailed(id, byTheChannel: error is BodyWriteFailed || error is BodyNoLongerWanted)
        let failure =
            error as? TrustHTTPClientError
            ?? TrustHTTPClientError(.requestBodyStreamExhausted, "the request body failed: \(error)", url: exchange.url, underlyingError: error)
        perform(ending, context: context, cause: failure)
    }

    // MARK: Writing through the framing

    /// Writes `part` as the framing puts it on the channel (it may hold it back until the next part or a flush).
    /// A part the framing refuses (an HTTP/2 request without a host) fails the exchange and closes the channel; the
    /// refusal is returned.
    @discardableResult
    private func write(_ part: HTTPClientRequestPart, promise: EventLoopPromise<Void>?, context: ChannelHandlerContext) -> (any Error)? {
        do {
            let (first, second) = try framing.write(part, promise: promise)
            if let first { context.write(wrapOutboundOut(first.message), promise: first.promise) }
            if let second { context.write(wrapOutboundOut(second.message), promise: second.promise) }
            return nil
        } catch {
            promise?.fail(error)
            errorCaught(context: context, error: error)
            return error
        }
    }

    @discardableResult
    private func writeAndFlush(_ part: HTTPClientRequestPart, promise: EventLoopPromise<Void>?, context: ChannelHandlerContext) -> (any Error)? {
        let refused = write(part, promise: promise, context: context)
        flush(context: context)
        return refused
    }

    private func writeAndFlush(_ part: HTTPClientRequestPart, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        let promise = context.eventLoop.makePromise(of: Void.self)
        writeAndFlush(part, promise: promise, context: context)
        return promise.futureResult
    }

    /// Writes what the framing held back, then flushes.
    func flush(context: ChannelHandlerContext) {
        if let held = framing.flush() { context.write(wrapOutboundOut(held.message), promise: held.promise) }
        context.flush()
    }

    // MARK: The response

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard current != nil else { return }
        let parts: (HTTPClientResponsePart?, HTTPClientResponsePart?)
        do {
            parts = try framing.read(unwrapInboundIn(data))
        } catch {
            errorCaught(context: context, error: error)
            return
        }
        if let first = parts.0 { receive(first, context: context) }
        if let second = parts.1 { receive(second, context: context) }
    }

    @inline(__always)
    private func receive(_ part: HTTPClientResponsePart, context: ChannelHandlerContext) {
        guard let exchange = current else { return }
        switch part {
        case .head(let head): receiveHead(head, of: exchange, context: context)
        case .body(let buffer): receiveBody(buffer, of: exchange, now: context.eventLoop.now)
        case .end: perform(machine.receivedEnd(), context: context)
        }
    }

    /// A response head: an interim one (which may release a body held for `100 Continue`) or the response's.
    @inline(__always)
    private func receiveHead(_ head: HTTPResponseHead, of exchange: HTTPExchange, context: ChannelHandlerContext) {
        switch machine.receivedHead(head, now: context.eventLoop.now) {
        case .none: break
        case .sendBody(let sending):
            cancelContinueTimer()
            sendBody(sending, of: exchange, context: context, promise: nil)
        case .deliver:
            cancelContinueTimer()
            exchange.deliver(head)
        case .end(let ending): perform(ending, context: context)
        }
    }

    /// Body bytes: counted for backpressure (``BodyFlowControl``) and held until the read cycle ends or
    /// ``bodyChunkLimit`` is reached.
    @inline(__always)
    private func receiveBody(_ buffer: ByteBuffer, of exchange: HTTPExchange, now: NIODeadline) {
        switch machine.receivedBody(buffer, now: now) {
        case .none: break
        case .held: exchange.bodyProduced(buffer.readableBytes)
        case .deliver(let bytes):
            exchange.bodyProduced(buffer.readableBytes)
            exchange.bodyContinuation.yield(bytes)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        switch machine.readComplete() {
        case .none: break
        case .deliver(let bytes): current?.bodyContinuation.yield(bytes)
        case .end(let ending): perform(ending, context: context)
        }
        context.fireChannelReadComplete()
    }

    /// Holds the socket read while the reader is behind (see ``BodyFlowControl``).
    func read(context: ChannelHandlerContext) {
        if let exchange = current, !exchange.shouldRead() { return }
        context.read()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ResponseHeadLimiter.HeadBytesArrived {
            machine.headBytesArrived(now: context.eventLoop.now)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        perform(machine.errorCaught(), context: context, cause: error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failUnsent()
        perform(machine.channelInactive(), context: context)
        context.fireChannelInactive()
    }

    /// Carries out how the machine ended the current request; `cause` is the error of a channel or body failure.
    private func perform(_ ending: Machine.Ending, context: ChannelHandlerContext, cause: (any Error)? = nil) {
        switch ending {
        case .none: return
        case .close: break
        case .finish(let body, let keepAlive, let close):
            endCurrent(handingOver: body)?.finish(keepAlive: keepAlive)
            guard close else { return }
        case .fail(let failure, let body, let close):
            if let exchange = endCurrent(handingOver: body) { exchange.fail(error(for: failure, of: exchange, cause: cause)) }
            guard close else { return }
        }
        context.close(promise: nil)
    }

    /// The error a failure of `exchange` ends it with.
    private func error(for failure: Machine.Failure, of exchange: HTTPExchange, cause: (any Error)?) -> any Error {
        switch failure {
        case .closed: return ConnectionClosedError(isHTTP2Stream: isHTTP2Stream)
        case .channelError, .requestBodyFailed: return cause ?? ConnectionClosedError(isHTTP2Stream: isHTTP2Stream)
        case .limitExceeded(let limit): return ResponseLimitExceeded(limit: limit)
        case .readTimedOut:
            let message = "no data from the server for \(exchange.readTimeout ?? .zero) (read timeout)"
            return TrustHTTPClientError(.timedOut, exchange.timeoutMessage(message), url: exchange.url)
        }
    }

    /// Hands `body` (what arrived before the end) to the current exchange, stops its timers and task, and returns it.
    private func endCurrent(handingOver body: ReceivedBody?) -> HTTPExchange? {
        guard let exchange = current else { return nil }
        if let body { exchange.bodyContinuation.yield(body) }
        cancelContinueTimer()
        bodyTask?.cancel()
        bodyTask = nil
        readTimer?.cancel()
        readTimer = nil
        current = nil
        return exchange
    }

    private func cancelContinueTimer() {
        continueTimer?.cancel()
        continueTimer = nil
    }

    /// The body waits for `100 Continue`, or this long at most: a client must not wait indefinitely (RFC 9110 §10.1.1).
    private func scheduleContinueTimer(_ id: Machine.RequestID, in wait: TimeAmount, context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        continueTimer = context.eventLoop.scheduleTask(in: wait) {
            let (handler, context) = loopBound.value
            guard let sending = handler.machine.continueTimedOut(id), let exchange = handler.current else { return }
            handler.continueTimer = nil
            handler.sendBody(sending, of: exchange, context: context, promise: nil)
        }
    }

    /// The read timeout: checked when it could have run out, re-armed for what is left while bytes
    /// keep arriving; not counted while the reader is behind (the channel is not reading then). Scheduled on the
    /// loop, where SwiftNIO's scheduling does not throw (that the loop is still open is a precondition there); a check
    /// pending when the loop shuts down never runs (NIO cancels it).
    private func scheduleReadTimer(_ id: Machine.RequestID, in delay: TimeAmount, context: ChannelHandlerContext) {
        let check = ReadTimeoutCheck(handler: self, context: context, id: id)
        readTimer = try? context.eventLoop.scheduleCallback(in: delay, handler: check)
    }

    /// The read timeout's check of request `id` is due (the machine ignores it once another request is current).
    private func readTimerFired(_ id: Machine.RequestID, context: ChannelHandlerContext) {
        guard let exchange = current else { return }
        switch machine.readTimerFired(id, now: context.eventLoop.now, readsHeld: exchange.isHoldingReads) {
        case .none: break
        case .reschedule(let next): scheduleReadTimer(id, in: next, context: context)
        case .end(let ending): perform(ending, context: context)
        }
    }

    /// A read timeout check (``scheduleReadTimer(_:in:context:)``), run by the event loop as a scheduled
    /// callback, where a scheduled task allocated its promise and three closure contexts. Three words, so that the
    /// event loop keeps it inline in its task: no allocation. (`assumeIsolated()`'s scheduling would wrap it in a
    /// loop-bound box, five words, allocated for every request.)
    ///
    /// `@unchecked Sendable`: it holds the handler and its context, which belong to the channel's event loop, and it is
    /// scheduled on that loop alone, which runs its callbacks on its own thread (checked in debug builds).
    private struct ReadTimeoutCheck: NIOScheduledCallbackHandler, @unchecked Sendable {
        let handler: HTTPExchangeHandler
        let context: ChannelHandlerContext
        let id: Machine.RequestID

        func handleScheduledCallback(eventLoop: some EventLoop) {
            eventLoop.assertInEventLoop()
            handler.readTimerFired(id, context: context)
        }
    }
}

/// The exchange handler of an HTTP/1.1 connection, and of an HTTP/2 stream behind ``HTTP2ExchangeCodec``.
typealias HTTP1ExchangeHandler = HTTPExchangeHandler<HTTP1ExchangeFraming>
/// The exchange handler of an HTTP/2 stream: it reads and writes the stream's frames.
typealias HTTP2ExchangeHandler = HTTPExchangeHandler<HTTP2ExchangeFraming>

extension HTTPRequestStateMachine.Request {
    /// What the machine needs to know of `exchange`.
    init(_ exchange: HTTPExchange) {
        let body: HTTPRequestStateMachine.Body
        switch exchange.body {
        case .none: body = .none
        case .bytes: body = .bytes
        case .stream(_, let length): body = .stream(length: length)
        }
        self.init(
            isHEAD: exchange.head.method == .HEAD, body: body, continueTimeout: exchange.continueTimeout.map { TimeAmount($0) },
            readTimeout: exchange.readTimeout.map { TimeAmount($0) }, maximumInformationalResponses: exchange.limits.maximumInformationalResponses
        )
    }
}

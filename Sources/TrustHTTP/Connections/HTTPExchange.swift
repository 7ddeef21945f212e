import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What an exchange sends after its head.
enum ExchangeBody: Sendable {
    case none
    /// Bytes in memory, written with the head.
    case bytes(ByteBuffer)
    /// A file or sequence, written chunk by chunk as the connection takes it; `length` is its
    /// declared length (nil when unknown, sent chunked or to END_STREAM).
    case stream(TrustHTTPClientRequest.Body.Writer, length: Int?)

    init(_ body: TrustHTTPClientRequest.Body?) {
        guard let body else {
            self = .none
            return
        }
        switch body.content {
        case .bytes(let buffer): self = buffer.readableBytes == 0 ? .none : .bytes(buffer)
        case .stream(let writeAll): self = .stream(writeAll, length: body.length)
        }
    }
}

/// One request and its response, handed to an ``HTTPExchangeHandler``.
final class HTTPExchange: Sendable {
    let head: HTTPRequestHead
    let body: ExchangeBody
    /// How long the body waits for `100 Continue` (nil: it is sent with the head).
    let continueTimeout: Duration?
    let bodyContinuation: AsyncThrowingStream<ReceivedBody, any Error>.Continuation
    let bodyStream: AsyncThrowingStream<ReceivedBody, any Error>
    /// The event loop of the channel the exchange runs on.
    let eventLoop: any EventLoop
    /// The request's URL, for errors raised inside the pipeline.
    let url: URL?
    /// The longest wait for the next bytes of the response while the reader wants them (nil: none).
    let readTimeout: Duration?
    /// The response limits (interim responses are counted per exchange).
    let limits: ResponseLimits
    /// Told of the body bytes the connection has taken (``TrustHTTPClientRequest/uploadProgress``).
    let uploadProgress: (@Sendable (Int, Int?) -> Void)?

    private struct State {
        /// Set by the first end, in the same step as it takes what the end needs. Not derived from ``outcome``: a
        /// failing end marks the exchange ended first and records its error a step later, outside the lock (a
        /// deadline's error reads this state: ``timeoutMessage(_:)``); in between, the exchange has ended without one.
        var ended = false
        /// The final response head, once it has arrived: for a wait that begins after it (``responseHead()``).
        var deliveredHead: HTTPResponseHead?
        /// The session's task waiting for the head (``responseHead()``), until it arrives or the exchange fails.
        var headContinuation: UnsafeContinuation<HTTPResponseHead, any Error>?
        /// The promise of ``responseHeadFuture``, once someone has asked for it before the head.
        var headPromise: EventLoopPromise<HTTPResponseHead>?
        var upload = UploadProgress()
        /// Backpressure on the response body: the event loop counts what it hands over, the reader what it takes.
        var flow: BodyFlowControl
        /// Gives the connection back to its pool when the exchange ends (``returnConnectionWhenEnded(_:)``): taken
        /// by whichever end comes first, and carried out before the reader can see that end.
        var connectionReturn: ConnectionReturn?
        /// How the exchange ended: whether its connection may be reused, or the error it failed with.
        var outcome: Result<Bool, any Error>?
        /// The promise of ``ended``, once someone has asked for it before the end.
        var endWaiter: EventLoopPromise<Bool>?
        /// The channel the exchange runs on, once known (``bind(_:)``): the connection's for HTTP/1.1,
        /// its stream's for HTTP/2.
        var channel: (any Channel)?
        /// The armed deadlines (``armDeadlines(_:on:)``): until the response head, until the end.
        var headDeadline: NIOScheduledCallback?
        var totalDeadline: NIOScheduledCallback?
        /// What a deadline that passes runs and says: set when the first is armed, dropped when the exchange ends
        /// (with the request's context it captures), so that a deadline passing after its cancel does nothing.
        var timeouts: Connection.ExchangeTimeouts?

        /// The head, or the failure that came before it, when either is known.
        var knownHead: Result<HTTPResponseHead, any Error>? {
            if let deliveredHead { return .success(deliveredHead) }
            switch outcome {
            case .failure(let error)?: return .failure(error)
            // An end without a head (none reaches here: a response ends after its head) is a closed connection.
            case .success?: return .failure(ConnectionClosedError())
            case nil: return nil
            }
        }

        /// The exchange ended: what its deadlines run is dropped, and both are taken, to be cancelled once the lock
        /// is released, with the connection's return, to be carried out then (``Ended/carryOut(reusable:)``).
        mutating func takeEnded(_ outcome: Result<Bool, any Error>) -> Ended {
            timeouts = nil
            self.outcome = outcome
            return Ended(
                headDeadline: headDeadline.take(), totalDeadline: totalDeadline.take(), connectionReturn: connectionReturn.take(),
                endWaiter: endWaiter.take(), headContinuation: headContinuation.take(), headPromise: headPromise.take())
        }
    }

    /// What an end took from the state (``State/takeEnded(_:)``), carried out once the lock is released: a pool's
    /// release may close a connection, whose handler ends its exchange — this one — on the same thread.
    private struct Ended {
        var headDeadline: NIOScheduledCallback?
        var totalDeadline: NIOScheduledCallback?
        var connectionReturn: ConnectionReturn?
        var endWaiter: EventLoopPromise<Bool>?
        /// Who still waits for the head: only when it never came (its delivery took them).
        var headContinuation: UnsafeContinuation<HTTPResponseHead, any Error>?
        var headPromise: EventLoopPromise<HTTPResponseHead>?

        /// Tells whoever still waits for the head that none comes: the exchange failed with `error` before it. The
        /// error is made only when someone waits (an error boxed for nothing is an allocation of every request).
        func failHeadWaiters(_ error: @autoclosure () -> any Error) {
            guard headContinuation != nil || headPromise != nil else { return }
            let error = error()
            headContinuation?.resume(throwing: error)
            headPromise?.fail(error)
        }

        /// Returns the connection, then cancels the deadlines (the waiter for ``HTTPExchange/ended`` is told after the
        /// reader, by ``HTTPExchange/finish(keepAlive:)`` and ``HTTPExchange/fail(_:)``).
        func carryOut(reusable: Bool) {
            connectionReturn?(reusable: reusable)
            headDeadline?.cancel()
            totalDeadline?.cancel()
        }
    }

    private let state: NIOLockedValueBox<State>

    /// An exchange whose channel is bound later, on `eventLoop` (``bind(_:)``): an HTTP/2 stream opened
    /// in the same event-loop turn as the request is written. Not inlined: in `TrustHTTPClient.exchange`, where a request
    /// waits for its head, the state it builds took room in the frame (measured: "Frame sizes" in RequestFlow.md).
    @inline(never)
    init(
        head: HTTPRequestHead, body: ExchangeBody, continueTimeout: Duration? = nil, eventLoop: any EventLoop, url: URL? = nil, readTimeout: Duration? = nil,
        limits: ResponseLimits = ResponseLimits(), uploadProgress: (@Sendable (Int, Int?) -> Void)? = nil, flow: BodyFlowControl = BodyFlowControl()
    ) {
        self.state = NIOLockedValueBox(State(flow: flow))
        self.head = head
        self.uploadProgress = uploadProgress
        self.body = body
        self.continueTimeout = continueTimeout
        self.url = url
        self.readTimeout = readTimeout
        self.limits = limits
        self.eventLoop = eventLoop
        (self.bodyStream, self.bodyContinuation) = AsyncThrowingStream.makeStream(of: ReceivedBody.self)
        let state = self.state
        // A reader that abandons the body before its end closes the channel: the rest of the response
        // would otherwise block the connection.
        self.bodyContinuation.onTermination = { termination in
            guard case .cancelled = termination else { return }
            let channel = state.withLockedValue { $0.ended ? nil : $0.channel }
            channel?.close(promise: nil)
        }
    }

    /// An exchange on `channel`, bound at once.
    convenience init(
        head: HTTPRequestHead, body: ExchangeBody, continueTimeout: Duration? = nil, channel: any Channel, url: URL? = nil,
        readTimeout: Duration? = nil, limits: ResponseLimits = ResponseLimits(), uploadProgress: (@Sendable (Int, Int?) -> Void)? = nil
    ) {
        self.init(
            head: head, body: body, continueTimeout: continueTimeout, eventLoop: channel.eventLoop, url: url, readTimeout: readTimeout, limits: limits,
            uploadProgress: uploadProgress)
        _ = bind(channel)
    }

    /// Binds the exchange to the channel it runs on; false (and nothing bound) if it has already
    /// ended — failed by a deadline or a cancellation while its HTTP/2 stream was opening — so the
    /// caller closes that channel.
    func bind(_ channel: any Channel) -> Bool {
        state.withLockedValue { state -> Bool in
            guard !state.ended else { return false }
            state.channel = channel
            return true
        }
    }

    /// Gives the connection back with `connectionReturn` when the exchange ends — at once if it has ended — reusable
    /// only if the response ended normally on a connection that may carry another. The return comes before the reader
    /// can see the end (the body's end or its error), so that its next request finds the connection in the pool.
    func returnConnectionWhenEnded(_ connectionReturn: ConnectionReturn) {
        let reusable = state.withLockedValue { state -> Bool? in
            guard state.ended else {
                state.connectionReturn = connectionReturn
                return nil
            }
            return (try? state.outcome?.get()) ?? false
        }
        if let reusable { connectionReturn(reusable: reusable) }
    }

    // MARK: Backpressure (``BodyFlowControl``)

    /// Body bytes were handed to the reader (on the event loop).
    func bodyProduced(_ count: Int) {
        state.withLockedValue { $0.flow.produced(count) }
    }

    /// A `read` event (on the event loop): whether to pass it on now, else it is held until the reader catches up.
    func shouldRead() -> Bool {
        state.withLockedValue { $0.flow.shouldRead() }
    }

    /// The reader took `count` bytes: a read held for it is issued on the channel once it is far enough behind.
    func bodyConsumed(_ count: Int) {
        let resume = state.withLockedValue { state in state.flow.consumed(count) ? state.channel : nil }
        if let channel = resume {
            channel.eventLoop.execute { channel.read() }
        }
    }

    /// Bytes handed to the reader and not yet taken.
    var bufferedBytes: Int { state.withLockedValue { $0.flow.buffered } }

    /// Whether socket reads are held because the reader is behind.
    var isHoldingReads: Bool { state.withLockedValue { $0.flow.readPending } }

    /// How far a streamed request body has got (updated on the event loop by the exchange handler).
    var upload: UploadProgress { state.withLockedValue { $0.upload } }

    /// Records a step of the streamed body (see ``UploadProgress``).
    func recordUpload(_ update: (inout UploadProgress) -> Void) {
        state.withLockedValue { update(&$0.upload) }
    }

    /// The connection took `count` more bytes of the body: recorded, and told to ``uploadProgress``
    /// while the exchange lasts (a server may answer before the whole body is out; what is written
    /// after the response ended is no longer this request's progress).
    func bodyWritten(_ count: Int) {
        let (sent, ended) = state.withLockedValue { state -> (Int, Bool) in
            state.upload.written(count)
            return (state.upload.sent, state.ended)
        }
        guard let uploadProgress, !ended else { return }
        switch body {
        case .bytes(let bytes): uploadProgress(sent, bytes.readableBytes)
        case .stream(_, let length): uploadProgress(sent, length)
        case .none: break  // nothing is written
        }
    }

    /// `message`, followed — for a streamed body not yet sent in full — by how far it got and what it
    /// waits for: a deadline that passes mid-upload then says whether the body's source or the
    /// connection (its socket buffer, or the HTTP/2 flow-control window the server has not reopened)
    /// held it up.
    func timeoutMessage(_ message: String) -> String {
        guard case .stream(_, let length) = body, let detail = upload.summary(declaredLength: length) else { return message }
        return "\(message); \(detail)"
    }

    /// Marks the exchange ended; false if it already was.
    private func markEnded() -> Bool {
        state.withLockedValue { state in
            defer { state.ended = true }
            return !state.ended
        }
    }

    /// Writes the request on `channel`, on its event loop. A channel that has closed (a TLS 1.3 server refusing the
    /// client certificate right after the handshake, say) has dropped its handlers, or is dropping them: a write
    /// would fail at the head of the pipeline, where only its promise would hear of it. So the exchange fails at once
    /// on a channel that is no longer active; on an active one the exchange handler takes the write, and hears of the
    /// channel's end — no promise, and no callback, per request.
    func send(on channel: any Channel) {
        guard channel.isActive else {
            fail(ConnectionClosedError())
            return
        }
        channel.writeAndFlush(self, promise: nil)
    }

    /// The final response head arrived: its deadline is cancelled.
    func deliver(_ head: HTTPResponseHead) {
        typealias Waiters = (NIOScheduledCallback?, UnsafeContinuation<HTTPResponseHead, any Error>?, EventLoopPromise<HTTPResponseHead>?)
        let (deadline, continuation, promise) = state.withLockedValue { state -> Waiters in
            // A head that arrives after the exchange failed (a deadline passed as it came) is not its answer: the
            // failure's end takes the waiters.
            guard !state.ended else { return (nil, nil, nil) }
            state.deliveredHead = head
            return (state.headDeadline.take(), state.headContinuation.take(), state.headPromise.take())
        }
        continuation?.resume(returning: head)
        promise?.succeed(head)
        deadline?.cancel()
    }

    /// The final response head, once it arrives, or the error the exchange fails with before it. The task waits on
    /// its own continuation: no promise and no callbacks for every request, as a future's `get()` costs.
    func responseHead() async throws -> HTTPResponseHead {
        try await withUnsafeThrowingContinuation { continuation in
            let known = state.withLockedValue { state -> Result<HTTPResponseHead, any Error>? in
                if let head = state.knownHead { return head }
                assert(state.headContinuation == nil, "a second wait for the response head")
                state.headContinuation = continuation
                return nil
            }
            if let known { continuation.resume(with: known) }
        }
    }

    /// ``responseHead()`` as a future, for tests and harnesses on an event loop; made only when asked for.
    var responseHeadFuture: EventLoopFuture<HTTPResponseHead> {
        state.withLockedValue { state in Self.future(of: state.knownHead, waiter: &state.headPromise, on: eventLoop) }
    }

    /// A future of `known` when it is known, else of the promise kept in `waiter` (made now, the first time).
    private static func future<Value: Sendable>(
        of known: Result<Value, any Error>?, waiter: inout EventLoopPromise<Value>?, on eventLoop: any EventLoop
    ) -> EventLoopFuture<Value> {
        if let known { return eventLoop.makeCompletedFuture(known) }
        if let waiter { return waiter.futureResult }
        let promise = eventLoop.makePromise(of: Value.self)
        waiter = promise
        return promise.futureResult
    }

    /// The response ended normally: its deadlines are cancelled — the end's, and the head's should it still be armed.
    func finish(keepAlive: Bool) {
        let ended = state.withLockedValue { state -> Ended? in
            guard !state.ended else { return nil }
            state.ended = true
            return state.takeEnded(.success(keepAlive))
        }
        guard let ended else { return }
        ended.carryOut(reusable: keepAlive)
        // A response ends after its head (the state machine and the HTTP/2 framing see to it); were one to end
        // without, its waiter would still hear of it.
        ended.failHeadWaiters(ConnectionClosedError())
        bodyContinuation.finish()
        ended.endWaiter?.succeed(keepAlive)
    }

    /// Succeeds, once the response has ended, with whether the connection may be reused, or fails with the exchange's
    /// error. Its promise is made only when asked for before the end: a session learns of the end through the
    /// connection's return (``returnConnectionWhenEnded(_:)``), so that no request pays for a promise only tests and
    /// diagnostics read.
    var ended: EventLoopFuture<Bool> {
        state.withLockedValue { state in Self.future(of: state.outcome, waiter: &state.endWaiter, on: eventLoop) }
    }

    /// The response failed; only the first end (normal or failed) counts. Whoever waits — for the
    /// head or for the next body bytes — hears of it at once, before the connection has finished
    /// closing (a TLS close waits for the peer's close_notify, which a hostile peer never sends).
    func fail(_ error: any Error) {
        guard markEnded() else { return }
        failEnded(error)
    }

    private func failEnded(_ error: any Error) {
        let ended = state.withLockedValue { state in state.takeEnded(.failure(error)) }
        ended.carryOut(reusable: false)
        ended.failHeadWaiters(error)
        bodyContinuation.finish(throwing: error)
        ended.endWaiter?.fail(error)
    }

    /// Keeps `deadline` (``armDeadlines(_:on:)``), and what it runs and says when it passes (`timeouts`), until the
    /// end it waits for — the response head, or the end (`total`) — or cancels it at once when that end came first
    /// (the exchange failed before the deadlines were armed).
    func keepDeadline(_ deadline: NIOScheduledCallback, total: Bool, timeouts: Connection.ExchangeTimeouts) {
        let settled = state.withLockedValue { state -> Bool in
            if state.ended || (!total && state.deliveredHead != nil) { return true }
            if total { state.totalDeadline = deadline } else { state.headDeadline = deadline }
            state.timeouts = timeouts
            return false
        }
        if settled { deadline.cancel() }
    }

    /// A deadline passed: unless the exchange has ended, it ends — checked and marked at once, as
    /// ``abandonUnlessEnded(_:)`` does, so that a cancellation or a response end racing the deadline keeps its own
    /// outcome and `onTimeout` runs only for an exchange that fails timed out. Whoever waits then hears of
    /// `error(timeouts)` and the channel closes. Nothing once the deadlines were dropped (the exchange ended).
    func endTimedOut(_ error: (Connection.ExchangeTimeouts) -> any Error) {
        let timeouts = state.withLockedValue { state -> Connection.ExchangeTimeouts? in
            guard !state.ended, let timeouts = state.timeouts else { return nil }
            state.ended = true
            return timeouts
        }
        guard let timeouts else { return }
        timeouts.onTimeout()
        failEnded(error(timeouts))
        state.withLockedValue { $0.channel }?.close(promise: nil)
    }

    /// What the armed deadlines run and say when they pass (nil before one is armed).
    var deadlineTimeouts: Connection.ExchangeTimeouts? { state.withLockedValue { $0.timeouts } }

    /// The reader gave up on the response: as ``abort(_:)``, but only while it has not ended — checked and
    /// marked at once, so that a connection already back in the pool (or carrying another request) is
    /// never closed. `error` is made only then: a body read to its end, the common case, boxes no error.
    func abandonUnlessEnded(_ error: @autoclosure () -> any Error) {
        guard markEnded() else { return }
        failEnded(error())
        state.withLockedValue { $0.channel }?.close(promise: nil)
    }

    /// Fails the exchange with `error` and closes its channel (a limit or deadline reached, the
    /// reader gone): the rest of the response is never read. An HTTP/2 stream not open yet is closed
    /// as it opens (``bind(_:)`` refuses it).
    func abort(_ error: any Error) {
        fail(error)
        state.withLockedValue { $0.channel }?.close(promise: nil)
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

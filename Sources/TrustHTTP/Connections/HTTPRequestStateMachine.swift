import NIOCore
import NIOHTTP1

/// One request and its response on a channel, as a value: events in, actions out. No channels, no timers, no
/// tasks — the request is described by a ``Request``, each one gets a ``RequestID`` so that late events (a timer,
/// the body's task) from an earlier one are told apart, and the time comes in with the events that need it — so
/// every transition can be driven by a test without a socket. ``HTTPExchangeHandler`` is its driver: it feeds it
/// the channel's events and carries out its actions (writes, timers, the body's task, ending the exchange).
///
/// A channel carries one request at a time (HTTP/1.1 in turn, an HTTP/2 stream one in all). For each:
/// - the request side (``RequestState``): the head is written, then the body — at once, streamed from a task as the
///   connection takes it (``UploadWindow``), or held back for `100 Continue` until it comes or
///   ``Request/continueTimeout`` passes; a final response that comes first abandons it (RFC 9110 §10.1.1);
/// - the response side (``ResponseState``): interim 1xx heads are counted against
///   ``Request/maximumInformationalResponses`` until the final head; its body bytes are held for the read cycle
///   (``bodyChunkLimit``) and handed over when it ends; the end finishes the exchange, the connection kept only when
///   the request was sent in full too;
/// - a failure (a channel error — a limit, a bad status, an HTTP/2 RST_STREAM —, the channel closing early, the read
///   timeout, the body's source failing) ends it with what arrived before.
///
/// Backpressure on the response body stays in ``BodyFlowControl``, shared with the reader on another thread; the
/// machine is told whether reads are held when the read timeout is checked.
struct HTTPRequestStateMachine: Sendable {
    /// A request's identity on this channel (given out by ``start(_:channelIsActive:now:)``).
    struct RequestID: Hashable, Sendable {
        let value: UInt64
    }

    /// What is sent after the head.
    enum Body: Hashable, Sendable {
        case none
        /// Bytes in memory.
        case bytes
        /// A sequence streamed by a task, of declared `length` (nil: unknown).
        case stream(length: Int?)
    }

    /// What the machine needs to know of a request.
    struct Request: Hashable, Sendable {
        /// A HEAD request: its response has no content (RFC 9110 §9.3.2).
        var isHEAD: Bool
        var body: Body
        /// How long the body waits for `100 Continue` (nil: it is sent with the head).
        var continueTimeout: TimeAmount?
        /// The longest wait for bytes of the response (nil: none).
        var readTimeout: TimeAmount?
        var maximumInformationalResponses: Int
    }

    /// The request side.
    enum RequestState: Hashable, Sendable {
        /// The head is written; the body waits for `100 Continue` or the timeout.
        case waitingForContinue
        /// The body streams from a task; `written` bytes handed to the channel so far.
        case streaming(written: Int)
        /// The request has been written in full.
        case complete
        /// The final response came before the body was sent: the body is not sent.
        case abandoned
    }

    /// The response side.
    enum ResponseState: Hashable, Sendable {
        /// No final head yet.
        case waitingForHead
        /// The final head arrived; its body, if any, follows. `noContent`: an answer to HEAD, a 204 or a 304, which
        /// has none whatever its framing says (RFC 9110 §6.4.1).
        case receivingBody(keepAlive: Bool, noContent: Bool)
    }

    /// The most body bytes held before they are handed over within one read cycle.
    static let bodyChunkLimit = 256 * 1024

    /// At the end of an HTTP/2 stream channel's pipeline (not an HTTP/1.1 connection's).
    let isHTTP2Stream: Bool

    struct Running: Hashable, Sendable {
        let id: RequestID
        let request: Request
        var sending: RequestState
        var response = ResponseState.waitingForHead
        /// Interim (1xx) heads so far.
        var informational = 0
        /// When bytes of the response last arrived (or the peer last took bytes of the request).
        var lastActivity: NIODeadline
    }

    /// The request under way, if any.
    private(set) var current: Running?
    private var nextID: UInt64 = 0
    /// Body bytes of the current read cycle, as received (kept out of ``current``, so appending never copies them).
    private(set) var pendingBody: ReceivedBody?
    /// The head of a response without content arrived on an HTTP/2 stream this read cycle: it completes when the
    /// cycle ends, whether or not the stream has ended.
    private(set) var contentlessHeadArrived = false

    init(isHTTP2Stream: Bool) {
        self.isHTTP2Stream = isHTTP2Stream
    }

    // MARK: The request

    /// A request is written on the channel.
    mutating func start(_ request: Request, channelIsActive: Bool, now: NIODeadline) -> StartAction {
        guard current == nil, channelIsActive else { return .refuse }
        nextID += 1
        let id = RequestID(value: nextID)
        let sending: Sending
        let state: RequestState
        if let wait = request.continueTimeout, request.body != .none {
            // The head alone; the body once the server says `100 Continue`, or without an answer after `wait`:
            // a client must not wait for it indefinitely (RFC 9110 §10.1.1).
            (sending, state) = (.headAwaitingContinue(wait), .waitingForContinue)
        } else if case .stream = request.body {
            (sending, state) = (.headThenStream, .streaming(written: 0))
        } else {
            (sending, state) = (.whole, .complete)
        }
        current = Running(id: id, request: request, sending: state, lastActivity: now)
        return .start(id, sending, readTimeout: request.readTimeout)
    }

    /// The wait for `100 Continue` ran out: the body is sent anyway (RFC 9110 §10.1.1).
    mutating func continueTimedOut(_ id: RequestID) -> BodySending? {
        guard current?.id == id, current?.sending == .waitingForContinue else { return nil }
        return sendHeldBody()
    }

    private mutating func sendHeldBody() -> BodySending? {
        guard let request = current?.request else { return nil }
        switch request.body {
        case .none, .bytes:
            current?.sending = .complete
            return .bytesAndEnd
        case .stream:
            current?.sending = .streaming(written: 0)
            return .stream
        }
    }

    /// The body's task hands over a part of `count` bytes: whether to write it (else the body is no longer wanted).
    mutating func bodyPartReady(_ id: RequestID, count: Int) -> Bool {
        guard current?.id == id, case .streaming(let written) = current?.sending else { return false }
        current?.sending = .streaming(written: written + count)
        return true
    }

    /// The channel took a part of the body: the peer is taking the request, which the read timeout counts as
    /// activity as it counts bytes of the response (of this request only: the channel may have moved on).
    mutating func bodyPartWritten(_ id: RequestID, now: NIODeadline) {
        guard current?.id == id else { return }
        current?.lastActivity = now
    }

    /// The body's sequence ended: whether to write the end of the request (else the body is no longer wanted).
    mutating func bodyEndReady(_ id: RequestID) -> Bool {
        guard current?.id == id, case .streaming = current?.sending else { return false }
        current?.sending = .complete
        return true
    }

    /// The body's task failed; `byTheChannel` when its write failed or it was told the body is no longer wanted
    /// (the channel's own error or closing ends the request then).
    mutating func bodyFailed(_ id: RequestID, byTheChannel: Bool) -> Ending {
        guard current?.id == id, case .streaming = current?.sending, !byTheChannel else { return .none }
        return failCurrent(.requestBodyFailed, close: true)
    }

    /// Whether the request is on the wire in full. A body of declared length whose every byte is written is
    /// complete over HTTP/1.1, though its task has not yet seen its sequence end (the server may answer as soon
    /// as the last byte is in).
    var isRequestComplete: Bool {
        guard let current else { return true }
        switch current.sending {
        case .complete: return true
        case .streaming(let written):
            guard !isHTTP2Stream, case .stream(let length?) = current.request.body else { return false }
            return length == written
        case .waitingForContinue, .abandoned: return false
        }
    }

    // MARK: The response

    /// A response head: an interim one (1xx but 101, RFC 9110 §15.2) or the final one.
    mutating func receivedHead(_ head: HTTPResponseHead, now: NIODeadline) -> HeadAction {
        guard current != nil else { return .none }
        current?.lastActivity = now
        let code = head.status.code
        if code >= 100 && code < 200 && head.status != .switchingProtocols {
            return receivedInformational(head)
        }
        if current?.sending == .waitingForContinue {
            // A final answer before the body (a 401, a 413, a 417): the body is not sent.
            current?.sending = .abandoned
        }
        let noContent = current?.request.isHEAD == true || code == 204 || code == 304
        current?.response = .receivingBody(keepAlive: head.isKeepAlive, noContent: noContent)
        if isHTTP2Stream && noContent { contentlessHeadArrived = true }
        return .deliver
    }

    /// An interim head: counted against ``Request/maximumInformationalResponses``; a `100 Continue` the body waits
    /// for sends it (RFC 9110 §10.1.1).
    private mutating func receivedInformational(_ head: HTTPResponseHead) -> HeadAction {
        guard let running = current else { return .none }
        let count = running.informational + 1
        current?.informational = count
        let maximum = running.request.maximumInformationalResponses
        if count > maximum {
            return .end(failCurrent(.limitExceeded(ResponseLimit(.informationalResponses, observed: count, limit: maximum)), close: true))
        }
        guard head.status == .continue, running.sending == .waitingForContinue, let body = sendHeldBody() else { return .none }
        return .sendBody(body)
    }

    /// Whether the current response has no content whatever its framing says (RFC 9110 §6.4.1).
    private var hasNoContent: Bool {
        guard let current else { return false }
        if case .receivingBody(_, let noContent) = current.response { return noContent }
        return current.request.isHEAD
    }

    /// Body bytes: held until the read cycle ends or ``bodyChunkLimit`` is reached.
    @inline(__always)
    mutating func receivedBody(_ buffer: ByteBuffer, now: NIODeadline) -> BodyAction {
        guard current != nil else { return .none }
        current?.lastActivity = now
        // A response without content has none whatever DATA frames a server sends on its HTTP/2 stream: they are
        // dropped as they come, so that the stream's window keeps opening and its end arrives (held, they would
        // stall a server with more than a window to send). HTTP/1.1's decoder knows these answers have no body.
        if isHTTP2Stream && hasNoContent { return .none }
        guard buffer.readableBytes > 0 else { return .none }
        if pendingBody == nil {
            pendingBody = ReceivedBody(buffer)
        } else {
            pendingBody?.append(buffer)
        }
        guard let pending = pendingBody, pending.byteCount >= Self.bodyChunkLimit else { return .held }
        pendingBody = nil
        return .deliver(pending)
    }

    /// The end of the response: the request finishes, keeping the connection only when the request was sent in full
    /// too. A request not sent in full leaves the connection in no known state: HTTP/1.1 closes it (the server may
    /// read what was not sent as the next request, RFC 9110 §10.1.1); an HTTP/2 stream is reset (RFC 9113 §8.1: a
    /// complete response may come before the request).
    mutating func receivedEnd() -> Ending {
        guard let running = current else { return .none }
        contentlessHeadArrived = false
        let requestComplete = isRequestComplete
        var keepAlive = false
        if case .receivingBody(let headKeepAlive, _) = running.response { keepAlive = headKeepAlive && requestComplete }
        let body = takePendingBody()
        current = nil
        return .finish(body: body, keepAlive: keepAlive, close: !requestComplete && isHTTP2Stream)
    }

    /// The read cycle ended: its body bytes are handed over. The head of an answer without content that came in it on
    /// an HTTP/2 stream whose end has not come (a server sending content after a HEAD's answer, never ending the
    /// stream) completes the response, as curl takes it; the stream is reset.
    mutating func readComplete() -> ReadCompleteAction {
        let body = takePendingBody()
        guard contentlessHeadArrived else { return body.map { .deliver($0) } ?? .none }
        contentlessHeadArrived = false
        guard current != nil else { return body.map { .deliver($0) } ?? .none }
        current = nil
        return .end(.finish(body: body, keepAlive: false, close: true))
    }

    /// Bytes of a response head arrived (before it is complete): activity for the read timeout.
    mutating func headBytesArrived(now: NIODeadline) {
        current?.lastActivity = now
    }

    /// The read timer of request `id` ran: checked when the timeout could have run out, re-armed for what is left
    /// while bytes keep arriving; not counted while the reader is behind (`readsHeld`: the channel is not reading).
    mutating func readTimerFired(_ id: RequestID, now: NIODeadline, readsHeld: Bool) -> ReadTimerAction {
        guard let running = current, running.id == id, let limit = running.request.readTimeout else { return .none }
        if readsHeld {
            // The wait for the peer starts again once the reader catches up.
            current?.lastActivity = now
            return .reschedule(limit)
        }
        let idle = now - running.lastActivity
        if idle < limit { return .reschedule(limit - idle) }
        return .end(failCurrent(.readTimedOut, close: true))
    }

    // MARK: Failures

    /// The channel reported an error (a limit, a bad status, an HTTP/2 stream reset, a TLS failure): the request
    /// fails with it, and the channel closes.
    mutating func errorCaught() -> Ending {
        guard current != nil else { return .close }
        return failCurrent(.channelError, close: true)
    }

    /// The channel closed (the server closed early, or the exchange was cancelled or abandoned and closed it).
    mutating func channelInactive() -> Ending {
        guard current != nil else { return .none }
        return failCurrent(.closed, close: false)
    }

    /// Ends the current request with `failure`; what arrived before is the body's, as it would have been without
    /// holding it.
    mutating func failCurrent(_ failure: Failure, close: Bool) -> Ending {
        let body = takePendingBody()
        current = nil
        return .fail(failure, body: body, close: close)
    }

    /// The cycle's body bytes, if any; none kept (an idle pooled connection holds no buffer).
    private mutating func takePendingBody() -> ReceivedBody? {
        defer { pendingBody = nil }
        return pendingBody
    }
}

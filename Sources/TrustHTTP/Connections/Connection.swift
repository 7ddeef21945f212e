import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression
import NIOSSL
import Trust
import TrustNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An open HTTP/1.1 connection or HTTP/2 connection to one origin.
final class Connection: Sendable {
    let channel: any Channel
    /// `.http1_1` or `.http2`.
    let httpVersion: HTTPVersion
    /// The server-trust decision of this connection's TLS handshake (nil for plain HTTP). The connection keeps
    /// the decision alone, not the handshake's challenges (their handlers, the request that made it): those
    /// go with the request that made the connection (``TrustHTTPClient``), which alone may need them afterwards.
    let serverTrust: TrustDecision?
    /// Whether the connection may serve other requests (false when a task-level handler decided trust).
    let shareable: Bool
    /// The TLS version negotiated.
    let tlsVersion: TLSVersion?
    /// Errors seen on the connection: TLS alerts that arrive after the handshake, HTTP/2 connection errors.
    let errors: ConnectionErrorLog
    /// A plain connection to an HTTP proxy: requests carry the absolute URI.
    let usesAbsoluteForm: Bool
    private let multiplexer: NIOLoopBound<NIOHTTP2Handler.StreamMultiplexer>?
    /// Set up in each HTTP/2 stream (the HTTP/1.1 pipeline has it already).
    private let decompression: ResponseDecompression

    init(
        channel: any Channel, multiplexer: NIOLoopBound<NIOHTTP2Handler.StreamMultiplexer>?, serverTrust: TrustDecision?, shareable: Bool,
        tlsVersion: TLSVersion?,
        errors: ConnectionErrorLog = ConnectionErrorLog(), usesAbsoluteForm: Bool = false,
        decompression: ResponseDecompression = .disabled
    ) {
        self.decompression = decompression
        self.usesAbsoluteForm = usesAbsoluteForm
        self.errors = errors
        self.channel = channel
        self.multiplexer = multiplexer
        self.httpVersion = multiplexer == nil ? .http1_1 : .http2
        self.serverTrust = serverTrust
        self.shareable = shareable
        self.tlsVersion = tlsVersion
    }

    var isHTTP2: Bool { multiplexer != nil }
    var isActive: Bool { channel.isActive }

    /// Methods a client may repeat after a connection failure (RFC 9110 §9.2.2).
    static let idempotentMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]

    /// Whether a request whose HTTP/2 stream failed with `error` before any response may be sent
    /// again on a new connection: a stream the server refused (REFUSED_STREAM — never processed,
    /// RFC 9113 §8.7), any method; a stream cancelled — which is how NIOHTTP2 ends the open streams
    /// of a connection that closes or goes away (GOAWAY, §6.8) — or a connection closed under it,
    /// idempotent methods only (RFC 9110 §9.2.2). A stream the server reset with an error (e.g.
    /// INTERNAL_ERROR) is its answer, not retried.
    func mayRetryHTTP2Request(after error: any Error, method: String) -> Bool {
        guard isHTTP2 else { return false }
        if let closed = error as? NIOHTTP2Errors.StreamClosed {
            if closed.errorCode == .refusedStream { return true }
            return closed.errorCode == .cancel && Self.idempotentMethods.contains(method)
        }
        return error is ConnectionClosedError && Self.idempotentMethods.contains(method)
    }

    /// Sends one request and returns once the response head arrives. Each deadline of `timeouts`
    /// that passes first runs `onTimeout`, fails the exchange at once (whoever waits hears of it
    /// then, not once the connection has finished closing) and closes the stream.
    ///
    /// One hop to the event loop, for both protocols: it arms the deadlines, opens the HTTP/2 stream
    /// (``openStream(for:on:connection:decompression:)``) and writes the request in the same turn, and the caller resumes once,
    /// with the head.
    func exchange(
        head: HTTPRequestHead, body: ExchangeBody, continueTimeout: Duration? = nil, url: URL, timeouts: ExchangeTimeouts, limits: ResponseLimits,
        uploadProgress: (@Sendable (Int, Int?) -> Void)? = nil
    ) async throws -> (head: HTTPResponseHead, exchange: HTTPExchange) {
        let channel = self.channel
        let exchange = HTTPExchange(
            head: head, body: body, continueTimeout: continueTimeout, eventLoop: channel.eventLoop, url: url, readTimeout: timeouts.read, limits: limits,
            uploadProgress: uploadProgress)
        // HTTP/1.1: bound to the connection at once, so an exchange that fails before the hop (a
        // cancellation) still closes it. HTTP/2: bound to its stream once that is open.
        if multiplexer == nil { _ = exchange.bind(channel) }
        let responseHead = try await withTaskCancellationHandler {
            channel.eventLoop.execute { [self] in
                exchange.armDeadlines(timeouts, on: channel.eventLoop)
                if let multiplexer {
                    Self.openStream(for: exchange, on: multiplexer.value, connection: channel, decompression: decompression)
                } else {
                    exchange.send(on: channel)
                }
            }
            return try await exchange.responseHead()
        } onCancel: {
            exchange.abort(CancellationError())
        }
        return (responseHead, exchange)
    }

    func close() {
        channel.close(promise: nil)
    }

    /// What the server did wrong, if `error` — or an earlier error on the connection (an HTTP/2
    /// connection error reaches its streams only as their closing) — says so.
    func violation(explaining error: any Error) -> ServerViolation? {
        ServerViolation(error) ?? errors.violation
    }

    /// ``violation(explaining:)``, once the connection has settled: an HTTP/2 stream closed under a
    /// request (closed, or reset: `StreamClosed`) can be the first sign of a connection error that is recorded a moment later, on the
    /// connection's event loop, while this runs on another thread. So for a closed stream this waits
    /// until a violation is recorded, the connection has closed, or `grace` has passed (a stream the
    /// server reset on a healthy connection), whichever comes first.
    func settledViolation(explaining error: any Error, grace: TimeAmount = .milliseconds(100)) async -> ServerViolation? {
        if let violation = violation(explaining: error) { return violation }
        let streamEnded = (error as? ConnectionClosedError)?.isHTTP2Stream == true || error is NIOHTTP2Errors.StreamClosed
        guard isHTTP2, streamEnded || !channel.isActive else { return nil }
        let settled = channel.eventLoop.makePromise(of: Void.self)
        errors.whenViolation { settled.succeed() }
        channel.closeFuture.whenComplete { _ in settled.succeed() }
        let timer = channel.eventLoop.scheduleTask(in: grace) { settled.succeed() }
        try? await settled.futureResult.get()
        timer.cancel()
        return errors.violation
    }

    /// The handlers of an HTTP/2 stream that carries one exchange: the exchange handler, which reads and writes the
    /// stream's frames and sends `exchange` (when given) once the stream is active; with decompression, the
    /// ``HTTP2ExchangeCodec``, the decompressor and the exchange handler behind them. Must run on the stream's event
    /// loop. Added one at a time: `addHandlers` takes them as an array, one more allocation for every request.
    static func configureStream(_ stream: any Channel, decompression: ResponseDecompression = .disabled, sending exchange: HTTPExchange? = nil) throws {
        try configureStream(stream, decompression: decompression, handler: makeStreamHandler(decompression: decompression, sending: exchange))
    }

    /// ``configureStream(_:decompression:sending:)`` with the exchange handler already made.
    private static func configureStream(_ stream: any Channel, decompression: ResponseDecompression, handler: any ChannelHandler) throws {
        let pipeline = stream.pipeline.syncOperations
        if decompression.isEnabled {
            try pipeline.addHandler(HTTP2ExchangeCodec())
            try pipeline.addHandler(NIOHTTPResponseDecompressor(limit: .ratio(decompression.maximumRatio)))
        }
        try pipeline.addHandler(handler)
    }

    /// The exchange handler of a stream: it speaks the stream's frames itself, or HTTP/1 parts behind a decompressor.
    private static func makeStreamHandler(decompression: ResponseDecompression, sending exchange: HTTPExchange?) -> any ChannelHandler {
        if decompression.isEnabled { return HTTP1ExchangeHandler(isHTTP2Stream: true, sendingWhenActive: exchange) }
        return HTTP2ExchangeHandler(isHTTP2Stream: true, sendingWhenActive: exchange)
    }

    /// The deadlines of one exchange.
    struct ExchangeTimeouts: Sendable {
        /// Until the response head.
        var head: Duration
        /// Until the end of the response (nil: the body is not bounded in time as a whole).
        var total: Duration?
        /// The longest wait for more bytes of the response while the reader wants them.
        var read: Duration?
        /// Runs when `head` or `total` passes.
        var onTimeout: @Sendable () -> Void
        /// What the error says when `head` (false) or `total` (true) passes — built only then, not for
        /// every exchange.
        var message: @Sendable (_ total: Bool) -> String = { $0 ? "the transfer timed out" : "the request timed out" }
        /// `total` is `head`'s deadline too, with the same message (`data(for:)`): one timer covers both.
        var totalCoversHead = false
    }

    /// Opens an HTTP/2 stream for `exchange` on `connection` (through its `multiplexer`), whose exchange handler
    /// writes the request once the stream is active; on the connection's event loop. A connection that has closed (a
    /// server that refuses a client certificate under TLS 1.3 closes it right after a handshake the client already
    /// considered complete) fails the exchange at once. The exchange's deadlines, armed before, cover the opening. A
    /// stream that opens after the exchange ended (a deadline passed, the caller cancelled) is closed.
    ///
    /// No promise for the stream and no callback on it: its exchange handler is made first, with the exchange, where
    /// waiting for the stream's future cost a promise and two closures for every request. So the handler answers for
    /// the exchange until it sends it: a stream whose set-up throws, or that closes or loses the handler first, fails
    /// it; and so does a stream whose connection closed before it was made — swift-nio-http2 makes it on the loop's
    /// next turn, and then either runs the initializer, which refuses a stream whose connection is not active, or
    /// reports the closed connection only to the promise, dropping the initializer and with it the handler, whose
    /// deinit fails the exchange. No callback on the connection's closeFuture either: one per
    /// stream would pile up (each holding its stream channel) for as long as the connection lives.
    static func openStream(
        for exchange: HTTPExchange, on multiplexer: NIOHTTP2Handler.StreamMultiplexer, connection: any Channel, decompression: ResponseDecompression
    ) {
        guard connection.isActive else {
            exchange.fail(ConnectionClosedError())
            return
        }
        let handler = NIOLoopBound(makeStreamHandler(decompression: decompression, sending: exchange), eventLoop: connection.eventLoop)
        multiplexer.createStreamChannel(promise: nil) { stream in
            do {
                // A connection that closed before its stream was made, and did not fail the making, would leave the
                // stream waiting for an activation that never comes.
                guard stream.parent?.isActive == true else { throw ConnectionClosedError(isHTTP2Stream: true) }
                try configureStream(stream, decompression: decompression, handler: handler.value)
                return stream.eventLoop.makeSucceededVoidFuture()
            } catch {
                exchange.fail(error)
                return stream.eventLoop.makeFailedFuture(error)
            }
        }
    }
}

import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOSSL
import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An HTTP response with its whole body.
public struct TrustHTTPClientResponse: Sendable {
    /// The URL that produced this response (after redirects).
    public var url: URL
    /// The HTTP status code.
    public var statusCode: Int
    /// The header fields, in order (case-insensitive lookup: `response.headers[.contentType]`).
    public var headers: HTTPFields
    /// The whole body, as received (``data`` and ``text`` convert it).
    public var body: ByteBuffer
    /// The HTTP version of the connection that carried the response: `.http1_1` or `.http2`.
    public var httpVersion: HTTPVersion
    /// The requests followed to get here (empty when there was no redirect).
    public var redirects: [URL]
    /// The connection's TLS version (`.tlsv13`), `nil` over plain HTTP.
    public var tlsVersion: TLSVersion?
    /// The server-trust decision of the connection that carried the response (`nil` over plain HTTP).
    public var serverTrust: TrustDecision?

    /// A response from its parts.
    package init(
        url: URL, statusCode: Int, headers: HTTPFields, body: ByteBuffer = ByteBuffer(), httpVersion: HTTPVersion, redirects: [URL] = [],
        tlsVersion: TLSVersion? = nil, serverTrust: TrustDecision? = nil
    ) {
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
        self.redirects = redirects
        self.tlsVersion = tlsVersion
        self.serverTrust = serverTrust
    }

    /// The status as swift-http-types' `HTTPResponse.Status`.
    public var status: HTTPResponse.Status { HTTPResponse.Status(code: statusCode) }

    /// The body's bytes as `Data` (a copy, made on each call).
    public var data: Data { Data(body.readableBytesView) }

    /// The body as UTF-8 text (invalid sequences replaced).
    public var text: String { String(decoding: body.readableBytesView, as: UTF8.self) }
}

/// A response whose body arrives as it is read.
public struct TrustHTTPClientStreamingResponse: Sendable {
    /// The URL that produced this response (after redirects).
    public var url: URL
    /// The HTTP status code.
    public var statusCode: Int
    /// The header fields, in order (case-insensitive lookup: `response.headers[.contentType]`).
    public var headers: HTTPFields
    /// The HTTP version of the connection that carried the response: `.http1_1` or `.http2`.
    public var httpVersion: HTTPVersion
    /// The URLs redirected from, in order (empty when there was no redirect).
    public var redirects: [URL]
    /// The connection's TLS version (`.tlsv13`), `nil` over plain HTTP.
    public var tlsVersion: TLSVersion?
    /// The server-trust decision of the connection that carried the response (`nil` over plain HTTP).
    public var serverTrust: TrustDecision?
    /// The body, chunk by chunk. Iterate it to the end, cancel it or drop it to release the connection.
    public var body: TrustHTTPClientStreamingResponse.Body
    /// A proxy's own answer to CONNECT (a 407 that may ask for proxy credentials).
    var isProxyAnswer = false
    /// An answer that has no body whatever its `Content-Length` says (to HEAD, 204, 304; RFC 9110 §8.6).
    var bodyless = false

    /// The status as swift-http-types' `HTTPResponse.Status`.
    public var status: HTTPResponse.Status { HTTPResponse.Status(code: statusCode) }

    init(
        url: URL, statusCode: Int, headers: HTTPFields, httpVersion: HTTPVersion, redirects: [URL], tlsVersion: TLSVersion?,
        serverTrust: TrustDecision?, body: TrustHTTPClientStreamingResponse.Body
    ) {
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
        self.httpVersion = httpVersion
        self.redirects = redirects
        self.tlsVersion = tlsVersion
        self.serverTrust = serverTrust
        self.body = body
    }

    /// A response already read, streamed again.
    init(_ response: TrustHTTPClientResponse) {
        self.init(
            url: response.url, statusCode: response.statusCode, headers: response.headers, httpVersion: response.httpVersion,
            redirects: response.redirects, tlsVersion: response.tlsVersion, serverTrust: response.serverTrust, body: .buffered(response.body))
    }

    /// Reads at most `limit` bytes of the body (the rest is abandoned, closing the connection).
    func collectPrefix(limit: Int) async throws -> TrustHTTPClientResponse {
        try await read(limit: limit, truncating: true)
    }

    /// Reads the rest of the body into a ``TrustHTTPClientResponse``. A body longer than `limit` bytes — announced
    /// by `Content-Length` or sent — fails with ``TrustHTTPClientError/Code/responseTooLarge`` as soon as
    /// that is known, and its connection is closed.
    public func collect(limit: Int = .max) async throws -> TrustHTTPClientResponse {
        try await read(limit: limit, truncating: false)
    }

    /// The body up to `limit` bytes: past it, the rest is abandoned (`truncating`) or the read fails.
    private func read(limit: Int, truncating: Bool) async throws -> TrustHTTPClientResponse {
        if !truncating, !bodyless, let announced = headers[.contentLength].flatMap({ Int($0) }), announced > limit {
            throw tooLarge(observed: announced, limit: limit)
        }
        // The first piece is kept as it came; at the second, one buffer of the body's own is made — sized for the
        // announced length, within reason, so it rarely grows — and each piece after is copied into it once.
        var collected = ByteBuffer()
        var pieces = 0
        for try await var chunk in body {
            let count = collected.readableBytes
            if count + chunk.readableBytes > limit {
                guard truncating else { throw tooLarge(observed: count + chunk.readableBytes, limit: limit) }
                body.abandon()
                if let kept = chunk.readSlice(length: limit - count) { append(kept, to: &collected, pieces: &pieces, limit: limit) }
                break
            }
            append(chunk, to: &collected, pieces: &pieces, limit: limit)
        }
        return response(body: collected)
    }

    /// At most this much is reserved ahead for an announced length (a server may announce more than it sends).
    private static let maximumReservation = 16 << 20

    /// Adds `chunk` to the body read so far (`pieces` of it): the first is taken as it is, without a copy.
    private func append(_ chunk: ByteBuffer, to collected: inout ByteBuffer, pieces: inout Int, limit: Int) {
        pieces += 1
        if pieces == 1 {
            collected = chunk
            return
        }
        if pieces == 2 {
            let announced = bodyless ? 0 : headers[.contentLength].flatMap { Int($0) } ?? 0
            let capacity = max(min(announced, limit, Self.maximumReservation), collected.readableBytes + chunk.readableBytes)
            var own = ByteBufferAllocator().buffer(capacity: capacity)
            own.writeImmutableBuffer(collected)
            collected = own
        }
        collected.writeImmutableBuffer(chunk)
    }

    /// Gives up on the body (its connection closes) and says why.
    private func tooLarge(observed: Int, limit: Int) -> TrustHTTPClientError {
        body.abandon()
        return TrustHTTPClientError(ResponseLimit(.body, observed: observed, limit: limit), url: url)
    }

    private func response(body: ByteBuffer) -> TrustHTTPClientResponse {
        TrustHTTPClientResponse(
            url: url, statusCode: statusCode, headers: headers, body: body, httpVersion: httpVersion, redirects: redirects,
            tlsVersion: tlsVersion, serverTrust: serverTrust)
    }
}

extension TrustHTTPClientStreamingResponse {
    /// The body of a ``TrustHTTPClientStreamingResponse``: its bytes as the connection received them, one
    /// `ByteBuffer` at a time, none copied on the way.
    ///
    /// A body not read to its end holds its connection (HTTP/1.1) or stream (HTTP/2) — a place among the session's
    /// ``TrustHTTPClientConfiguration/maximumConnectionsPerOrigin`` — until it is cancelled (``cancel()``) or dropped: once
    /// the response, every copy of its body and every iterator are gone, the rest of the response is abandoned
    /// (the connection closed, or the stream reset) and the place freed.
    public struct Body: AsyncSequence, Sendable {
        /// A piece of the body.
        public typealias Element = ByteBuffer
        let stream: AsyncThrowingStream<ReceivedBody, any Error>
        /// The exchange the body streams from (nil for a body already read): backpressure, giving up, and what a
        /// failure means. When the body, its copies and its iterators are all dropped unread, it abandons the exchange.
        /// The connection goes back to the pool from the exchange, before the reader can see the body's end.
        let link: ExchangeLink?
        /// The request's URL, for errors.
        var url: URL?

        /// Bytes received and not yet read (for tests and diagnostics).
        func bufferedBytes() -> Int { link?.bufferedBytes ?? 0 }

        /// Gives up on the rest of the body: the connection closes (it is never reused with a response
        /// half read). Nothing once the response has ended.
        func abandon() { link?.abandon() }

        /// Stops reading the body: unless the response has already ended, its connection is closed (HTTP/1.1)
        /// or its stream reset (HTTP/2), and its place in the pool freed. A read after it, or one waiting,
        /// throws a ``TrustHTTPClientError`` (cancelled). Dropping the body unread does the same.
        public func cancel() {
            link?.cancel()
        }

        /// Reads the body chunk by chunk. A body cut short (the connection lost, the reading Task
        /// cancelled) throws a ``TrustHTTPClientError`` — it never ends as if it were complete.
        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: AsyncThrowingStream<ReceivedBody, any Error>.AsyncIterator
            /// Keeps the exchange while this iterator lives, and abandons it when the last holder is gone.
            let link: ExchangeLink?
            let url: URL?
            var ended = false
            /// The pieces of the read cycle being handed out, and the index of the next.
            var received: ReceivedBody?
            var nextPiece = 0

            /// The next piece of the body, or nil at the end.
            public mutating func next() async throws -> ByteBuffer? {
                if let piece = received?.piece(at: nextPiece) {
                    nextPiece += 1
                    link?.consumed(piece.readableBytes)
                    return piece
                }
                received = nil
                let cycle: ReceivedBody?
                do {
                    cycle = try await base.next()
                } catch {
                    throw await failure(error)
                }
                if let cycle {
                    received = cycle.pieceCount > 1 ? cycle : nil
                    nextPiece = 1
                    link?.consumed(cycle.first.readableBytes)
                    return cycle.first
                }
                // The stream also ends (without an error) when the reading Task is cancelled: that is not the body's end.
                if !ended && Task.isCancelled { throw Self.cancelled(url: url, underlying: nil) }
                ended = true
                return nil
            }

            /// The error a failed read means for the caller.
            private func failure(_ error: any Error) async -> any Error {
                if error is TrustHTTPClientError { return error }
                if error is CancellationError { return Self.cancelled(url: url, underlying: nil) }
                if let explained = await link?.explain(error) { return explained }
                if Task.isCancelled { return Self.cancelled(url: url, underlying: error) }
                if (error as? ConnectionClosedError).map({ !$0.isHTTP2Stream }) ?? false || (error as? HTTPParserError) == .invalidEOFState {
                    var incomplete = TrustHTTPClientError(
                        .networkConnectionLost, "the server closed the connection before the end of the response body", url: url, underlyingError: error)
                    incomplete.isIncompleteBody = true
                    return incomplete
                }
                return TrustHTTPClientError(.networkConnectionLost, "the connection was lost while reading the response body", url: url, underlyingError: error)
            }

            private static func cancelled(url: URL?, underlying: (any Error)?) -> TrustHTTPClientError {
                let message = "reading the response body was cancelled"
                guard let underlying else { return TrustHTTPClientError(.cancelled, message, url: url) }
                return TrustHTTPClientError(.cancelled, message, url: url, underlyingError: underlying)
            }
        }

        /// An iterator over the body's chunks.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(base: stream.makeAsyncIterator(), link: link, url: url)
        }

        /// A body already read.
        static func buffered(_ buffer: ByteBuffer) -> TrustHTTPClientStreamingResponse.Body {
            let (stream, continuation) = AsyncThrowingStream.makeStream(of: ReceivedBody.self)
            if buffer.readableBytes > 0 { continuation.yield(ReceivedBody(buffer)) }
            continuation.finish()
            return TrustHTTPClientStreamingResponse.Body(stream: stream, link: nil, url: nil)
        }
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a streamed response body holds of its exchange once the head is in: backpressure, giving up, and the
/// explanation of a failure. Held by every copy of the body and by its iterators, and by nothing else: when the
/// last of them is dropped, the exchange is abandoned unless its response has already ended — its HTTP/1.1
/// connection closed (it cannot carry another request with a response half read, RFC 9112 §9.3) or its HTTP/2
/// stream reset (RFC 9113 §8.1), and its place in the pool freed. Without that, a body dropped unread would hold its
/// connection until the server closed it.
///
/// One object, so that a body and its iterators hold one reference (no closure context of their own to allocate for
/// every request). The connection goes back to the pool from the exchange itself (``ConnectionReturn``).
final class ExchangeLink: Sendable {
    let exchange: HTTPExchange
    let connection: Connection
    private let origin: Origin
    private let url: URL
    private let decompression: ResponseDecompression

    init(exchange: HTTPExchange, connection: Connection, origin: Origin, url: URL, decompression: ResponseDecompression) {
        self.exchange = exchange
        self.connection = connection
        self.origin = origin
        self.url = url
        self.decompression = decompression
    }

    deinit {
        exchange.abandonUnlessEnded(CancellationError())
    }

    /// The reader took `count` bytes (backpressure).
    func consumed(_ count: Int) {
        exchange.bodyConsumed(count)
    }

    /// Bytes received and not yet read.
    var bufferedBytes: Int { exchange.bufferedBytes }

    /// The reader stopped before the end: the rest of the response is not read. Nothing once the response
    /// has ended: its connection is back in the pool, perhaps already carrying another request.
    func abandon() {
        exchange.abandonUnlessEnded(ConnectionClosedError())
    }

    /// The body was cancelled (``TrustHTTPClientStreamingResponse/Body/cancel()``): as when it is dropped unread.
    func cancel() {
        exchange.abandonUnlessEnded(CancellationError())
    }

    /// What a failure of the body means: a server's violation, else a decompression failure, else nil.
    func explain(_ error: any Error) async -> TrustHTTPClientError? {
        await connection.settledViolation(explaining: error)?.sessionError(origin: origin, url: url)
            ?? TrustHTTPClientError(decompressionFailure: error, decompression: decompression, url: url)
    }
}

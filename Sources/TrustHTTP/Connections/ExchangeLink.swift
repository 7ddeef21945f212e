import NIOConcurrencyHelpers

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a response body needs of its exchange and connection once the head is in: the connection
/// given back to the pool — once, when the response ends or the reader stops — flow control, and
/// the explanation of a failure. One object, so that each of the body's callbacks holds this one
/// reference (no closure context of its own to allocate for every request).
final class ExchangeLink: Sendable {
    let exchange: HTTPExchange
    let connection: Connection
    private let pool: ConnectionPool
    private let key: PoolKey
    private let origin: Origin
    private let url: URL
    private let decompression: ResponseDecompression
    private let released = NIOLockedValueBox(false)

    init(exchange: HTTPExchange, connection: Connection, pool: ConnectionPool, key: PoolKey, origin: Origin, url: URL, decompression: ResponseDecompression) {
        self.exchange = exchange
        self.connection = connection
        self.pool = pool
        self.key = key
        self.origin = origin
        self.url = url
        self.decompression = decompression
        // Released when the response ends (on the event loop), before the reader sees the end.
        exchange.completion.futureResult.whenComplete { [self] result in release((try? result.get()) ?? false) }
    }

    /// Gives the connection back (reusable or to be closed), the first time only. Under the lock: a
    /// caller that comes second returns only once the connection is back in the pool (else the reader
    /// could go on to its next request, find no idle connection while the event loop is still
    /// releasing this one, and open a needless new connection).
    func release(_ reusable: Bool) {
        released.withLockedValue { done in
            guard !done else { return }
            done = true
            pool.release(connection, key: key, reusable: reusable)
        }
    }

    /// The body has ended: the event loop has normally released the connection already; this covers
    /// the rest without a hop.
    func ended() async {
        release(exchange.endedReusable)
    }

    func consumed(_ count: Int) {
        exchange.flow.consumed(count)
    }

    var bufferedBytes: Int { exchange.flow.bufferedBytes }

    /// The reader stopped before the end: the rest of the response is not read. Nothing once the response
    /// has ended: its connection is back in the pool, perhaps already carrying another request.
    func abandon() {
        exchange.abandonUnlessEnded(ConnectionClosedError())
    }

    /// The body was cancelled or dropped before its end (``UnreadBodyGuard``): the connection closes (HTTP/1.1)
    /// or the stream is reset (HTTP/2), and the pool hears of it; nothing once the response has ended.
    func dropped() {
        exchange.abandonUnlessEnded(CancellationError())
    }

    /// What a failure of the body means: a server's violation, else a decompression failure, else nil.
    func explain(_ error: any Error) async -> TrustHTTPClientError? {
        await connection.settledViolation(explaining: error)?.sessionError(origin: origin, url: url)
            ?? TrustHTTPClientError(decompressionFailure: error, decompression: decompression, url: url)
    }
}

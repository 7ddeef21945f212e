/// Held by a streamed response's ``TrustHTTPClientStreamingResponse/Body`` (every copy) and by its iterators: when the last of them is
/// dropped, the exchange is abandoned unless its response has already ended — its HTTP/1.1 connection closed
/// (it cannot carry another request with a response half read, RFC 9112 §9.3) or its HTTP/2 stream reset
/// (RFC 9113 §8.1), and its place in the pool freed. Without it, a body dropped unread would hold its
/// connection until the server closed it.
final class UnreadBodyGuard: Sendable {
    private let abandon: @Sendable () -> Void

    /// `abandon` must do nothing once the response has ended (the connection may be back in the pool) and
    /// may run more than once.
    init(_ abandon: @escaping @Sendable () -> Void) {
        self.abandon = abandon
    }

    /// Abandons the exchange now (``TrustHTTPClientStreamingResponse/Body/cancel()``).
    func cancel() {
        abandon()
    }

    deinit {
        abandon()
    }
}

/// How an exchange gives its connection back to the pool when it ends (``HTTPExchange/returnConnectionWhenEnded(_:)``):
/// a value kept in the exchange's state, so that the end that comes first — the response's, a failure, the reader
/// giving up — returns it, once, with no callback or flag of its own.
struct ConnectionReturn: Sendable {
    let pool: ConnectionPool
    let connection: Connection

    /// Gives the connection back: to carry another request if `reusable` (and still open), else to be closed.
    func callAsFunction(reusable: Bool) {
        pool.release(connection, reusable: reusable)
    }
}

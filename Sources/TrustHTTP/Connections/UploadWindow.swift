import NIOConcurrencyHelpers

/// The bytes of a streamed request body handed to the connection and not yet written to it.
///
/// The body's task hands each chunk to the event loop without waiting for its write, and waits only
/// while `limit` bytes or more are outstanding — until the connection has taken them down to half
/// of it. Waiting for every write instead would cost two thread hops per chunk (the event loop's,
/// then Swift's cooperative pool's), so an upload would go no faster than a busy pool schedules its
/// task; this way a scheduled task hands over up to `limit` bytes at once, and the body is still
/// read no faster than the peer takes it (its socket buffer, or its HTTP/2 flow-control window).
final class UploadWindow: Sendable {
    let limit: Int

    private struct State {
        var outstanding = 0
        /// The task waiting for room, and the bytes it waits to hand over.
        var waiter: (continuation: CheckedContinuation<Void, any Error>, count: Int)?
        var failure: (any Error)?
    }

    private let state = NIOLockedValueBox(State())

    init(limit: Int = 512 * 1024) {
        self.limit = limit
    }

    /// Counts `count` bytes as handed over, first waiting while `limit` or more are outstanding (calling
    /// `waiting` once if it must). Throws the window's failure, or `CancellationError` when the task
    /// is cancelled while it waits.
    func reserve(_ count: Int, waiting: () -> Void) async throws {
        // An exchange that ended cancels its body's task: no more of the source is read.
        try Task.checkCancellation()
        let mustWait = try state.withLockedValue { state -> Bool in
            if let failure = state.failure { throw failure }
            guard state.outstanding >= limit else {
                state.outstanding += count
                return false
            }
            return true
        }
        guard mustWait else { return }
        waiting()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let now: Result<Void, any Error>? = state.withLockedValue { state in
                    if let failure = state.failure { return .failure(failure) }
                    guard state.outstanding >= limit else {
                        state.outstanding += count
                        return .success(())
                    }
                    state.waiter = (continuation, count)
                    return nil
                }
                if let now { continuation.resume(with: now) }
            }
        } onCancel: {
            fail(CancellationError())
        }
    }

    /// `count` bytes were written: a waiting task goes on once no more than half of `limit` is outstanding.
    func written(_ count: Int) {
        let resumed = state.withLockedValue { state -> CheckedContinuation<Void, any Error>? in
            state.outstanding -= count
            guard let waiter = state.waiter, state.outstanding <= limit / 2 else { return nil }
            state.waiter = nil
            state.outstanding += waiter.count
            return waiter.continuation
        }
        resumed?.resume()
    }

    /// The body can go no further (a write failed, the exchange ended): the waiting task, and every
    /// later ``reserve(_:waiting:)``, throws `error` (the first failure is kept).
    func fail(_ error: any Error) {
        let resumed = state.withLockedValue { state -> (CheckedContinuation<Void, any Error>, any Error)? in
            if state.failure == nil { state.failure = error }
            guard let waiter = state.waiter, let failure = state.failure else { return nil }
            state.waiter = nil
            return (waiter.continuation, failure)
        }
        if let (continuation, failure) = resumed { continuation.resume(throwing: failure) }
    }
}

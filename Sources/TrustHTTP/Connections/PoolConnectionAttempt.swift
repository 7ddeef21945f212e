import NIOConcurrencyHelpers
import NIOCore

/// One connection attempt that the pool owns, and the request that caused it, which may stop waiting for it.
///
/// The attempt is made by the event loop (or, when the session's challenge handler is asked, in a task of its own),
/// bounded by the connect timeout (never by the causing request's deadline,
/// nor ended by its cancellation): a request that gives up leaves the attempt to the pool, which hands the connection,
/// when it comes, to the requests queued for the origin (AsyncHTTPClient's pool makes its connections itself for the
/// same reason). Exactly one side acts on the outcome:
///
/// | State | `finish(_:)` | `wait` begins | the request gives up |
/// | --- | --- | --- | --- |
/// | `pending` | → `finished`, kept for the request: `true` | → `waiting` | → `abandoned` |
/// | `waiting` | → `delivered`, the request resumed with it: `true` | — | → `abandoned`, the request resumed with why |
/// | `finished` | — | → `delivered`, at once | — (it has the outcome) |
/// | `abandoned` | `false`: the attempt gives its connection to the pool | resumed at once with why | — |
/// | `delivered` | — | — | — |
final class PoolConnectionAttempt: Sendable {
    /// What a waiting request gets.
    enum Outcome: Sendable {
        /// The attempt ended: its connection, or why it failed.
        case finished(Result<Connection, any Error>)
        /// The request's deadline passed first.
        case timedOut
        /// The request was cancelled first.
        case cancelled
    }

    enum State {
        case pending
        case waiting(CheckedContinuation<Outcome, Never>)
        case finished(Result<Connection, any Error>)
        case abandoned(Outcome)
        case delivered
    }

    private let state = NIOLockedValueBox(State.pending)

    /// The attempt's outcome: `true` when the request has it or will have it, `false` when the request gave up (the
    /// attempt then hands a connection to the pool, or reports the failure, itself).
    func finish(_ result: Result<Connection, any Error>) -> Bool {
        let (taken, waiting) = state.withLockedValue { state -> (Bool, CheckedContinuation<Outcome, Never>?) in
            switch state {
            case .pending:
                state = .finished(result)
                return (true, nil)
            case .waiting(let continuation):
                state = .delivered
                return (true, continuation)
            case .abandoned:
                return (false, nil)
            case .finished, .delivered:
                return (true, nil)
            }
        }
        waiting?.resume(returning: .finished(result))
        return taken
    }

    /// The request stops waiting (`why`: `.timedOut` or `.cancelled`); no effect once it has the outcome.
    func giveUp(_ why: Outcome) {
        let waiting = state.withLockedValue { state -> CheckedContinuation<Outcome, Never>? in
            switch state {
            case .pending:
                state = .abandoned(why)
                return nil
            case .waiting(let continuation):
                state = .abandoned(why)
                return continuation
            case .finished, .abandoned, .delivered:
                return nil
            }
        }
        waiting?.resume(returning: why)
    }

    /// Waits for the outcome until `timeout` has passed or the calling task is cancelled, whichever comes first.
    ///
    /// The deadline is a timer on `eventLoop`, cancelled (and freed) when the outcome comes first; a task sleeping
    /// instead would stay queued in the runtime's timer until its deadline, for every connection made.
    func wait(timeout: Duration, on eventLoop: any EventLoop) async -> Outcome {
        let timer = eventLoop.scheduleTask(in: TimeAmount(timeout)) { [weak self] in self?.giveUp(.timedOut) }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let now = state.withLockedValue { state -> Outcome? in
                    switch state {
                    case .pending:
                        state = .waiting(continuation)
                        return nil
                    case .finished(let result):
                        state = .delivered
                        return .finished(result)
                    case .abandoned(let why):
                        return why
                    case .waiting, .delivered:
                        // Waited for once by design; a second waiter gets nothing rather than a crash.
                        return .cancelled
                    }
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            giveUp(.cancelled)
        }
    }
}

import NIOConcurrencyHelpers

/// The challenges one handshake raised (on its event loop), waiting for the request making the connection to
/// answer them in its own task (``HandshakeChallenges/answering(_:)``). Each challenge is a job: what answering
/// it takes, and what tells the handshake no one will (the request stopped waiting for the connection).
final class ChallengeQueue: Sendable {
    /// One challenge to answer.
    struct Job: Sendable {
        /// Answers the challenge (asks the handlers) and gives the answer to the handshake.
        let run: @Sendable () async -> Void
        /// Gives the handshake a refusal: the request is no longer there to answer.
        let abandon: @Sendable () -> Void
    }

    private enum State {
        case open(pending: [Job], waiter: CheckedContinuation<Job?, Never>?)
        case closed
    }

    private let state = NIOLockedValueBox(State.open(pending: [], waiter: nil))

    init() {}

    /// Leaves `job` for the request's task; abandons it at once when the request no longer answers.
    func post(_ job: Job) {
        enum Delivery {
            case waiter(CheckedContinuation<Job?, Never>)
            case queued, closed
        }
        let delivery = state.withLockedValue { state -> Delivery in
            guard case .open(var pending, let waiter) = state else { return .closed }
            if let waiter {
                state = .open(pending: pending, waiter: nil)
                return .waiter(waiter)
            }
            pending.append(job)
            state = .open(pending: pending, waiter: nil)
            return .queued
        }
        switch delivery {
        case .waiter(let continuation): continuation.resume(returning: job)
        case .queued: break
        case .closed: job.abandon()
        }
    }

    /// Answers the jobs posted, each in a child task of the caller, until the caller's task is cancelled; then
    /// closes the queue (a job posted later, or left unstarted, is abandoned) and waits for the jobs started.
    func serve() async {
        await withTaskGroup(of: Void.self) { group in
            while let job = await next() {
                group.addTask { await job.run() }
            }
        }
    }

    /// The next job; nil once the queue is closed or the task cancelled (which closes it).
    private func next() async -> Job? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Job?, Never>) in
                enum Next {
                    case job(Job)
                    case none, wait
                }
                let next = state.withLockedValue { state -> Next in
                    guard case .open(var pending, _) = state else { return .none }
                    if pending.isEmpty {
                        state = .open(pending: [], waiter: continuation)
                        return .wait
                    }
                    let job = pending.removeFirst()
                    state = .open(pending: pending, waiter: nil)
                    return .job(job)
                }
                switch next {
                case .job(let job): continuation.resume(returning: job)
                case .none: continuation.resume(returning: nil)
                case .wait: break
                }
            }
        } onCancel: {
            close()
        }
    }

    /// No more jobs are answered: a waiting ``next()`` returns nil, and the jobs not started are abandoned.
    func close() {
        let (pending, waiter) = state.withLockedValue { state -> ([Job], CheckedContinuation<Job?, Never>?) in
            guard case .open(let pending, let waiter) = state else { return ([], nil) }
            state = .closed
            return (pending, waiter)
        }
        waiter?.resume(returning: nil)
        for challenge in pending { challenge.abandon() }
    }
}

import NIOConcurrencyHelpers
import NIOCore

/// The connection attempts a session's pool owns (``PoolConnectionAttempt``): each forgotten by itself when it ends,
/// the rest abandoned and waited for when the session shuts down, so none outlives it.
///
/// Most attempts are made by the event loop alone (``track(_:then:)``); an attempt whose handshake asks the session's
/// challenge handlers runs in a task that answers them (``start(_:)``).
final class PoolConnectionAttempts: Sendable {
    private enum Attempt {
        case task(Task<Void, Never>)
        case pending(PendingConnection)
    }

    private struct State {
        var attempts: [Int: Attempt] = [:]
        var next = 0
        var isShutDown = false
    }

    private let state = NIOLockedValueBox(State())

    /// Keeps `pending` until its connection is made or fails, then hands the outcome to `then` (on its event loop);
    /// after shutdown it is abandoned at once (`then` still runs, to tell its request so).
    func track(_ pending: PendingConnection, then: @escaping @Sendable (Result<Connection, any Error>) -> Void) {
        let number = state.withLockedValue { state -> Int? in
            guard !state.isShutDown else { return nil }
            defer { state.next += 1 }
            state.attempts[state.next] = .pending(pending)
            return state.next
        }
        if number == nil { pending.abandon() }
        pending.connection.whenComplete { result in
            then(result)
            if let number { self.ended(number) }
        }
    }

    /// Runs `operation` in a task of its own, kept until it ends; after shutdown the task is cancelled at once (the
    /// operation still runs, to tell its request so).
    func start(_ operation: @escaping @Sendable () async -> Void) {
        // The task is made under the lock, so that it is kept before it can end and forget itself (no second task per
        // attempt waits for its end).
        state.withLockedValue { state in
            let number = state.next
            state.next += 1
            let task = Task {
                await operation()
                self.ended(number)
            }
            if state.isShutDown {
                task.cancel()
            } else {
                state.attempts[number] = .task(task)
            }
        }
    }

    private func ended(_ number: Int) {
        _ = state.withLockedValue { $0.attempts.removeValue(forKey: number) }
    }

    /// The attempts kept: none once every attempt has ended.
    var kept: Int { state.withLockedValue { $0.attempts.count } }

    /// Abandons every attempt in progress and waits for them to end.
    func cancelAll() async {
        let attempts = state.withLockedValue { state -> [Attempt] in
            state.isShutDown = true
            defer { state.attempts = [:] }
            return Array(state.attempts.values)
        }
        for attempt in attempts {
            switch attempt {
            case .task(let task):
                task.cancel()
                await task.value
            case .pending(let pending):
                pending.abandon()
                _ = try? await pending.connection.get()
            }
        }
    }
}

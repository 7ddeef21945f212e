import NIOConcurrencyHelpers

/// The tasks of the connection attempts a session's pool owns (``PoolConnectionAttempt``): each removed when it ends,
/// the rest cancelled and waited for when the session shuts down, so none outlives it.
final class PoolConnectionAttempts: Sendable {
    private struct State {
        var tasks: [Int: Task<Void, Never>] = [:]
        var next = 0
        var isShutDown = false
    }

    private let state = NIOLockedValueBox(State())

    /// Keeps `task` until it ends; cancels it at once after shutdown.
    func track(_ task: Task<Void, Never>) {
        let number = state.withLockedValue { state -> Int? in
            guard !state.isShutDown else { return nil }
            defer { state.next += 1 }
            state.tasks[state.next] = task
            return state.next
        }
        guard let number else {
            task.cancel()
            return
        }
        Task {
            await task.value
            _ = state.withLockedValue { $0.tasks.removeValue(forKey: number) }
        }
    }

    /// Cancels every attempt in progress and waits for them to end.
    func cancelAll() async {
        let tasks = state.withLockedValue { state -> [Task<Void, Never>] in
            state.isShutDown = true
            defer { state.tasks = [:] }
            return Array(state.tasks.values)
        }
        for task in tasks {
            task.cancel()
            await task.value
        }
    }
}

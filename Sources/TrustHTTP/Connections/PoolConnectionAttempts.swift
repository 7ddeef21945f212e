import NIOConcurrencyHelpers

/// The tasks of the connection attempts a session's pool owns (``PoolConnectionAttempt``): each forgotten by itself
/// when it ends, the rest cancelled and waited for when the session shuts down, so none outlives it.
final class PoolConnectionAttempts: Sendable {
    private struct State {
        var tasks: [Int: Task<Void, Never>] = [:]
        /// Attempts that ended before `start` could keep their task.
        var endedEarly: Set<Int> = []
        var next = 0
        var isShutDown = false
    }

    private let state = NIOLockedValueBox(State())

    /// Runs `operation` in a task of its own, kept until it ends; after shutdown the task is cancelled at once (the
    /// operation still runs, to tell its request so).
    func start(_ operation: @escaping @Sendable () async -> Void) {
        let number = state.withLockedValue { state -> Int in
            defer { state.next += 1 }
            return state.next
        }
        // The task forgets itself: no second task per attempt waits for its end.
        let task = Task {
            await operation()
            self.ended(number)
        }
        let kept = state.withLockedValue { state -> Bool in
            if state.endedEarly.remove(number) != nil { return true }
            guard !state.isShutDown else { return false }
            state.tasks[number] = task
            return true
        }
        if !kept { task.cancel() }
    }

    private func ended(_ number: Int) {
        state.withLockedValue { state in
            if state.tasks.removeValue(forKey: number) == nil, !state.isShutDown { state.endedEarly.insert(number) }
        }
    }

    /// The tasks kept (or remembered as ended early): none once every attempt has ended.
    var kept: Int { state.withLockedValue { $0.tasks.count + $0.endedEarly.count } }

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

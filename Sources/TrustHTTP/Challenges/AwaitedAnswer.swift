import NIOConcurrencyHelpers

/// One answer that one waiter awaits, given from anywhere (a handler's task, a callback): the first given
/// counts. The wait ends early, with `nil`, when the waiting task is cancelled — so a waiter is never held by
/// work that does not answer, and a task group that waits for it ends when it is cancelled.
final class AwaitedAnswer<Value: Sendable>: Sendable {
    private let state = NIOLockedValueBox<(value: Value?, given: Bool, waiter: CheckedContinuation<Value?, Never>?)>((nil, false, nil))

    init() {}

    /// Gives the answer; `false` when one was already given (or the wait was cancelled).
    @discardableResult
    func give(_ value: Value?) -> Bool {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Value?, Never>?? in
            guard !state.given else { return .none }
            state.given = true
            state.value = value
            defer { state.waiter = nil }
            return .some(state.waiter)
        }
        guard case .some(let continuation) = waiter else { return false }
        continuation?.resume(returning: value)
        return true
    }

    /// The answer, once given; `nil` if the waiting task is cancelled first.
    func value() async -> Value? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
                let given = state.withLockedValue { state -> Value?? in
                    if state.given { return .some(state.value) }
                    state.waiter = continuation
                    return .none
                }
                if case .some(let value) = given { continuation.resume(returning: value) }
            }
        } onCancel: {
            give(nil)
        }
    }
}

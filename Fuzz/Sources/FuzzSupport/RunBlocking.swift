import Dispatch
import Foundation

/// Runs `body` to completion from synchronous code (libFuzzer's callback) and returns its result.
///
/// The calling thread is libFuzzer's own, not one of the concurrency pool's, so waiting on it cannot
/// starve the task it waits for.
public func runBlocking<Result: Sendable>(_ body: @escaping @Sendable () async -> Result) -> Result {
    let box = ResultBox<Result>()
    let done = DispatchSemaphore(value: 0)
    Task {
        box.set(await body())
        done.signal()
    }
    done.wait()
    guard let value = box.get() else { fatalError("runBlocking: the task finished without a result") }
    return value
}

/// Carries a result from the task to the waiting thread; the semaphore orders the accesses, the lock makes them safe.
private final class ResultBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value?

    func set(_ newValue: Value) {
        lock.lock()
        defer { lock.unlock() }
        value = newValue
    }

    func get() -> Value? {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A value behind a lock, for `Sendable` classes of this module that change state (`Synchronization.Mutex` needs
/// macOS 15 and iOS 18, above the package's platforms; NIOConcurrencyHelpers is not a dependency of `Trust`).
/// Every access goes through ``withLock(_:)``: the lock is never held across a suspension, nor while the body
/// calls out to code it does not know.
package final class LockedState<Value>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value

    /// A lock around `value`.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, under the lock.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

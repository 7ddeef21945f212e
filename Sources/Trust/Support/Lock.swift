#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A mutual-exclusion lock over a POSIX mutex, for the engine's `Sendable` classes.
///
/// Written here because nothing the engine may depend on offers one that fits: Foundation's `NSLock` is in
/// full Foundation only (not in FoundationEssentials, so using it would link ICU into every user's binary),
/// `Synchronization.Mutex` needs macOS 15 and iOS 18 (above the package's platforms), and
/// NIOConcurrencyHelpers is not a dependency of `Trust`. The mutex lives at a fixed address (allocated
/// once, never moved), as POSIX requires of a mutex in use (POSIX.1-2017, `pthread_mutex_init`).
package final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// An unlocked lock.
    /// - Parameter recursive: whether the thread holding the lock may take it again (`PTHREAD_MUTEX_RECURSIVE`;
    ///   it then gives it back as many times); otherwise taking it twice deadlocks.
    package init(recursive: Bool = false) {
        mutex = UnsafeMutablePointer.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        defer { pthread_mutexattr_destroy(&attributes) }
        if recursive { pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE)) }
        let status = pthread_mutex_init(mutex, &attributes)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Takes the lock, waiting for it if another thread holds it.
    package func lock() {
        let status = pthread_mutex_lock(mutex)
        precondition(status == 0, "pthread_mutex_lock failed: \(status)")
    }

    /// Gives the lock back; only the thread that took it may.
    package func unlock() {
        let status = pthread_mutex_unlock(mutex)
        precondition(status == 0, "pthread_mutex_unlock failed: \(status)")
    }

    /// Runs `body` holding the lock.
    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}

import Foundation
import Testing

/// At most ``limit`` test cases of the whole run at once, however many suites run in parallel.
///
/// Swift Testing starts every test of every suite at once. Many of ours are heavy — TLS handshakes
/// in a debug build, `trust` processes spawned by the dozen, certificates made at test time — and all
/// of them share two cores, the cooperative pool's two threads and NIO's event loops. Unpaced, on a
/// machine a third as fast as usual, a 5 s OCSP fetch or a 10 s TLS handshake on loopback waited
/// behind everyone else's work and timed out. Paced, the run takes as long (the work is the same) and
/// each test gets the machine for long enough to be judged on what it does. Every suite carries
/// `.paced`; a test waiting for its turn has not started, so the deadlines it sets have not either —
/// but a suite's `.timeLimit` counts the wait (Swift Testing applies it around every scope), so the
/// limits leave room for a whole run's worth of waiting, and a case whose limit passes while it waits
/// stops waiting (the wait is cancelled with it) instead of taking a turn to be cancelled in.
///
/// `TRUST_TEST_PARALLELISM` sets the limit (default: three per processor, at least four). Without it, the limit
/// follows the machine: while other processes (a build beside the run, another test run) use a third of its
/// processors' time (until under a tenth), a third as many cases run at once (``MachineLoad``), so that a loopback
/// exchange is not starved past the timeouts a test leaves it — beside a release build, a lab handshake took over
/// 10 s, and an 800 ms timer fired after 10 s. The run takes longer then; it is judged on what it tests.
package struct TestPacing: SuiteTrait, TestTrait, TestScoping {
    /// Test cases that may run at once on a machine of the run's own.
    package static let limit: Int = {
        if let text = ProcessInfo.processInfo.environment["TRUST_TEST_PARALLELISM"], let value = Int(text), value > 0 { return value }
        return max(4, 3 * ProcessInfo.processInfo.activeProcessorCount)
    }()

    /// Whether the limit was set by `TRUST_TEST_PARALLELISM` (then it is kept whatever the machine does).
    static let limitIsFixed = ProcessInfo.processInfo.environment["TRUST_TEST_PARALLELISM"].flatMap(Int.init).map { $0 > 0 } ?? false

    /// The limit now: ``limit``, or a third of it (at least two) while other processes load the machine.
    static func currentLimit() -> Int {
        guard !limitIsFixed else { return limit }
        return MachineLoad.shared.isBusy() ? max(2, limit / 3) : limit
    }

    static let permits = Permits(capacity: { currentLimit() })

    /// Applies to every test of the suite it is attached to.
    package var isRecursive: Bool { true }

    /// Only test cases take a turn: a suite, or a test function as a whole, waiting for one would hold a
    /// turn that its own cases need.
    package func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    /// Whether this task already runs inside a turn: a case of a suite nested in a paced suite inherits
    /// `.paced` twice, and must not wait for a second turn while holding the first.
    @TaskLocal static var holdsTurn = false

    package func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        if Self.holdsTurn {
            try await function()
            return
        }
        let ticket = UUID()
        guard await Self.permits.acquire(ticket) else { throw CancellationError() }
        do {
            try await Self.$holdsTurn.withValue(true) { try await function() }
        } catch {
            await Self.permits.release()
            throw error
        }
        await Self.permits.release()
    }

    /// A counting semaphore for async code, first come first served; a cancelled wait ends at once.
    package actor Permits {
        /// How many turns may be out at once, asked at every acquire and release (it may change).
        private let capacity: @Sendable () -> Int
        private var running = 0
        private var waiting: [(ticket: UUID, continuation: CheckedContinuation<Bool, Never>)] = []
        /// Tickets cancelled before their wait was queued.
        private var cancelledEarly: Set<UUID> = []

        package init(_ count: Int) { capacity = { count } }

        package init(capacity: @escaping @Sendable () -> Int) { self.capacity = capacity }

        /// True once a turn is taken; false when the task was cancelled while it waited.
        package func acquire(_ ticket: UUID) async -> Bool {
            if waiting.isEmpty, running < capacity() {
                running += 1
                return true
            }
            return await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    if cancelledEarly.remove(ticket) != nil {
                        continuation.resume(returning: false)
                    } else {
                        waiting.append((ticket, continuation))
                    }
                }
            } onCancel: {
                Task { await self.cancel(ticket) }
            }
        }

        private func cancel(_ ticket: UUID) {
            if let index = waiting.firstIndex(where: { $0.ticket == ticket }) {
                waiting.remove(at: index).continuation.resume(returning: false)
            } else {
                cancelledEarly.insert(ticket)
            }
        }

        package func release() {
            running -= 1
            let limit = capacity()
            while running < limit, !waiting.isEmpty {
                running += 1
                waiting.removeFirst().continuation.resume(returning: true)
            }
        }
    }
}

extension Trait where Self == TestPacing {
    /// Runs the suite's tests within the run's limit of test cases at once (``TestPacing``).
    package static var paced: Self { TestPacing() }
}

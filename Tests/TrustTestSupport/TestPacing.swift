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
/// `.paced`; a test waiting for its turn has not started, so its own deadlines have not either.
///
/// `TRUST_TEST_PARALLELISM` sets the limit (default: three per processor, at least four).
package struct TestPacing: SuiteTrait, TestTrait, TestScoping {
    /// Test cases that may run at once.
    package static let limit: Int = {
        if let text = ProcessInfo.processInfo.environment["TRUST_TEST_PARALLELISM"], let value = Int(text), value > 0 { return value }
        return max(4, 3 * ProcessInfo.processInfo.activeProcessorCount)
    }()

    static let permits = Permits(limit)

    /// Applies to every test of the suite it is attached to.
    package var isRecursive: Bool { true }

    /// Only test cases take a turn: a suite, or a test function as a whole, waiting for one would hold a
    /// turn that its own cases need.
    package func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    package func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        await Self.permits.acquire()
        do {
            try await function()
        } catch {
            await Self.permits.release()
            throw error
        }
        await Self.permits.release()
    }

    /// A counting semaphore for async code, first come first served.
    actor Permits {
        private var available: Int
        private var waiting: [CheckedContinuation<Void, Never>] = []

        init(_ count: Int) { available = count }

        func acquire() async {
            if available > 0 {
                available -= 1
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func release() {
            if waiting.isEmpty {
                available += 1
            } else {
                waiting.removeFirst().resume()
            }
        }
    }
}

extension Trait where Self == TestPacing {
    /// Runs the suite's tests within the run's limit of test cases at once (``TestPacing``).
    package static var paced: Self { TestPacing() }
}

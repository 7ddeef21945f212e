import NIOConcurrencyHelpers
import Testing
import TrustTestSupport

@testable import TrustHTTP

/// The upload window: a body's task hands over bytes until the limit, then waits until the
/// connection has taken them down to half; a failure or a cancellation ends the wait.
@Suite("UploadWindow: how far a streamed body runs ahead of the connection", .paced)
struct UploadWindowTests {
    struct WriteFailed: Error {}

    /// Waits (polling, with a generous bound) until `condition` holds.
    func eventually(_ condition: () -> Bool) async throws {
        for _ in 0..<2000 where !condition() { try await Task.sleep(for: .milliseconds(5)) }
    }

    @Test func waitsAtTheLimitAndGoesOnAtHalf() async throws {
        let window = UploadWindow(limit: 100)
        let waits = NIOLockedValueBox(0)
        try await window.reserve(60) { waits.withLockedValue { $0 += 1 } }
        try await window.reserve(60) { waits.withLockedValue { $0 += 1 } }  // 60 < 100: handed over, 120 out
        #expect(waits.withLockedValue { $0 } == 0)
        let handedOver = NIOLockedValueBox(false)
        let third = Task {
            try await window.reserve(10) { waits.withLockedValue { $0 += 1 } }
            handedOver.withLockedValue { $0 = true }
        }
        try await eventually { waits.withLockedValue { $0 } == 1 }
        #expect(waits.withLockedValue { $0 } == 1)
        window.written(60)  // 60 out: above half, still waiting
        try await Task.sleep(for: .milliseconds(20))
        #expect(!handedOver.withLockedValue { $0 })
        window.written(20)  // 40 out: at most half, the task goes on
        try await third.value
        #expect(handedOver.withLockedValue { $0 })
    }

    @Test func aFailureEndsTheWaitAndEveryLaterReserve() async throws {
        let window = UploadWindow(limit: 10)
        try await window.reserve(10) {}
        let waiting = Task { try await window.reserve(1) {} }
        try await Task.sleep(for: .milliseconds(20))
        window.fail(WriteFailed())
        await #expect(throws: WriteFailed.self) { try await waiting.value }
        window.written(10)  // a late completion changes nothing
        await #expect(throws: WriteFailed.self) { try await window.reserve(1) {} }
    }

    @Test func cancellingTheTaskEndsTheWait() async throws {
        let window = UploadWindow(limit: 10)
        try await window.reserve(10) {}
        let entered = NIOLockedValueBox(false)
        let waiting = Task { try await window.reserve(1) { entered.withLockedValue { $0 = true } } }
        try await eventually { entered.withLockedValue { $0 } }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        // A task cancelled before it asks reads no more of its source.
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await UploadWindow(limit: 10).reserve(1) {}
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
    }
}

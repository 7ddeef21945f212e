import Foundation
import Testing
import TrustTestSupport

/// The test suite's own pacing (``TestPacing``): turns in order, and a wait that is cancelled — a case
/// whose time limit passed while it waited — ends at once without taking or losing a turn.
@Suite(.paced) struct TestPacingTests {
    @Test func aCancelledWaitEndsAndTakesNoTurn() async {
        let permits = TestPacing.Permits(1)
        #expect(await permits.acquire(UUID()))
        let waiter = Task { await permits.acquire(UUID()) }
        try? await Task.sleep(for: .milliseconds(50))
        waiter.cancel()
        #expect(await waiter.value == false)
        // The one turn goes back and is taken again at once; a second waiter gets it on release.
        await permits.release()
        #expect(await permits.acquire(UUID()))
        let next = Task { await permits.acquire(UUID()) }
        try? await Task.sleep(for: .milliseconds(50))
        await permits.release()
        #expect(await next.value)
    }
}

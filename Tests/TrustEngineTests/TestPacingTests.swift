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

    /// The machine's load is read on Linux: a share of 0 to 1 once two samples a second apart exist, and it sees a
    /// process that keeps a processor busy beside this one.
    @Test func machineLoadSeesAnotherProcess() async throws {
        let load = MachineLoad()
        _ = load.othersShare()
        let busy = Process()
        busy.executableURL = URL(fileURLWithPath: "/bin/sh")
        busy.arguments = ["-c", "while :; do :; done"]
        busy.standardOutput = FileHandle.nullDevice
        busy.standardError = FileHandle.nullDevice
        try busy.run()
        // SIGKILL: the test process may ignore SIGTERM, and its children inherit that.
        defer {
            kill(busy.processIdentifier, SIGKILL)
            busy.waitUntilExit()
        }
        try await Task.sleep(for: .milliseconds(2500))
        let share = try #require(load.othersShare(), "no share read from /proc")
        #expect((0.0...1.0).contains(share))
        // One busy processor of N is 1/N of the machine; a loaded machine gives the busy loop less.
        #expect(share > 0.5 / Double(ProcessInfo.processInfo.activeProcessorCount) * 0.5, "\(share)")
    }
}

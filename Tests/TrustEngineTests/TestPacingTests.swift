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

    /// The machine's load is read on Linux: a share of 0 to 1 once two samples a second apart exist, and it counts
    /// the time of a process that keeps a processor busy beside this one.
    @Test func machineLoadSeesAnotherProcess() async throws {
        let load = MachineLoad()
        _ = load.othersShare()
        let start = ContinuousClock.now
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
        let elapsed = ContinuousClock.now - start
        let busyTicks = try #require(Self.processorTicks(of: busy.processIdentifier), "no /proc/PID/stat")
        #expect((0.0...1.0).contains(share))
        // What the busy process got depends on how loaded the machine is (on a busy machine it can be well under
        // one processor), so the share is held to that process's own time (proc(5): utime + stime), not to a
        // fixed figure: the machine's "others" are at least that process, less a few ticks of sampling.
        #expect(busyTicks > 0, "the busy process never ran")
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let machineTicks = seconds * ticksPerSecond * Double(ProcessInfo.processInfo.activeProcessorCount)
        let busyShare = Double(busyTicks) / machineTicks
        #expect(share >= busyShare * 0.75 - 0.02, "others \(share), the busy process alone \(busyShare)")
    }

    /// A process's user and system time in clock ticks: /proc/PID/stat's fields 14 and 15, counted after the
    /// command name (in parentheses, which may hold spaces).
    private static func processorTicks(of pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12 else { return nil }
        return fields[11...12].compactMap { Int($0) }.reduce(0, +)
    }
}

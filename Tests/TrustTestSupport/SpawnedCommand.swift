import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with posix_spawn, so the test can signal it and read its resource use
/// — what Foundation's `Process` does not report.
///
/// Its peak resident set size comes from GNU time when installed (`/usr/bin/time`, which `.ci/run`
/// installs): time forks from its own small process, so the figure is the command's own. wait4's
/// `ru_maxrss` of a posix_spawn (vfork) child is not: Linux keeps the larger of the old and the new
/// address space's peaks across exec, and the old one is this test process's — 200 MB of test
/// process make `/bin/true` report 200 MB. A command started with `measuresPeak` runs under GNU time
/// (its ``pid`` is then time's, which passes no signal on: signal tests start without it); without GNU
/// time, ``peakIsOwn`` is false.
package struct SpawnedCommand {
    package let pid: pid_t
    package let stdoutPath: String
    package let stderrPath: String
    /// Where GNU time writes the peak (nil when the command runs without it).
    private let timePath: String?

    /// GNU time, when installed.
    package static let gnuTime: String? = FileManager.default.isExecutableFile(atPath: "/usr/bin/time") ? "/usr/bin/time" : nil

    /// Whether ``wait(limit:)`` reports the command's own peak (started with `measuresPeak`, GNU time installed).
    package var peakIsOwn: Bool { timePath != nil }

    /// Starts `executable` with stdout and stderr to files (`stdout` may be `/dev/null`); under GNU time
    /// when `measuresPeak` and it is installed.
    package init(_ executable: String, _ arguments: [String], stdout: String, stderr: String, measuresPeak: Bool = false) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let timePath = try (measuresPeak ? Self.gnuTime : nil).map { _ in try TestScratch.file("spawned.time") }
        let command = timePath.map { path in [Self.gnuTime ?? "", "-f", "%M", "-o", path, executable] } ?? [executable]
        let argv: [UnsafeMutablePointer<CChar>?] = (command + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        // A process group of its own, so the watchdog ends the command with GNU time, not time alone.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        var child: pid_t = 0
        let result = posix_spawn(&child, command[0], &actions, &attributes, argv, environ)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        pid = child
        stdoutPath = stdout
        stderrPath = stderr
        self.timePath = timePath
    }

    /// How the child ended: its exit status (or nil when a signal killed it, with the signal),
    /// and its peak resident set size in KiB (see ``peakIsOwn``). Waits on a dedicated thread, never on
    /// Swift's pool; a child still running after `limit` seconds is killed (and reported as killed).
    package func wait(limit: Double = 90) async -> (status: Int32?, signal: Int32?, peakKilobytes: Int) {
        let pid = self.pid
        let (rawStatus, rawSignal, maxrss) = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let watchdog = DispatchWorkItem { kill(-pid, SIGKILL) }
                DispatchQueue.global().asyncAfter(deadline: .now() + limit, execute: watchdog)
                var status: Int32 = 0
                var usage = rusage()
                while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
                watchdog.cancel()
                let signal = status & 0x7f
                continuation.resume(returning: (signal == 0 ? (status >> 8) & 0xff : nil, signal == 0 ? nil : signal, usage.ru_maxrss))
            }
        }
        guard let timePath else { return (rawStatus, rawSignal, maxrss) }
        defer { unlink(timePath) }
        // time exits with the command's status (128+N for a signal) and writes %M, in KiB, last.
        let lines = ((try? String(contentsOfFile: timePath, encoding: .utf8)) ?? "").split(separator: "\n")
        var (status, signal) = (rawStatus, rawSignal)
        if let code = status, code > 128, lines.contains(where: { $0.contains("terminated by signal") }) { (status, signal) = (nil, code - 128) }
        guard let peak = lines.last.flatMap({ Int($0) }) else {
            Issue.record("GNU time wrote no peak: \(lines)")
            return (status, signal, maxrss)
        }
        return (status, signal, peak)
    }

    package var stderrText: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
}

/// Waits (bounded) until `condition` holds; false if it never did.
package func eventually(seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return condition()
}

/// Files in `directory`, hidden ones included.
package func filesIn(_ directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
}

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with posix_spawn, so the test can signal it and read its resource use
/// (wait4's peak resident set size) — what Foundation's `Process` does not report.
package struct SpawnedCommand {
    package let pid: pid_t
    package let stdoutPath: String
    package let stderrPath: String

    /// Starts `executable` with stdout and stderr to files (`stdout` may be `/dev/null`).
    package init(_ executable: String, _ arguments: [String], stdout: String, stderr: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, nil, argv, environ)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        pid = child
        stdoutPath = stdout
        stderrPath = stderr
    }

    /// How the child ended: its exit status (or nil when a signal killed it, with the signal),
    /// and its peak resident set size in KiB. Waits on a dedicated thread, never on Swift's pool;
    /// a child still running after `limit` seconds is killed (and reported as killed).
    package func wait(limit: Double = 90) async -> (status: Int32?, signal: Int32?, peakKilobytes: Int) {
        let pid = self.pid
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
                DispatchQueue.global().asyncAfter(deadline: .now() + limit, execute: watchdog)
                var status: Int32 = 0
                var usage = rusage()
                while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
                watchdog.cancel()
                let signal = status & 0x7f
                continuation.resume(returning: (signal == 0 ? (status >> 8) & 0xff : nil, signal == 0 ? nil : signal, usage.ru_maxrss))
            }
        }
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

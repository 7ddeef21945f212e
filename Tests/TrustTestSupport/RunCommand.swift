import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a command and returns (exit status, stdout, stderr). The waiting happens on a dedicated
/// thread, never on Swift's cooperative pool (on a 2-core machine two blocked waits would starve
/// every Task — including the TLS verification of an in-process server the command talks to).
///
/// Under a sanitizer build (`swift test --sanitize=thread`, see `.ci/tsan`) the `trust` binary is
/// instrumented too: a report it writes to its stderr fails the calling test instead of vanishing
/// in the captured output (with `log_path` in `TSAN_OPTIONS`, `.ci/tsan` collects it from the file).
///
/// The command is killed after `timeLimitSeconds` (``commandTimeLimitSeconds`` unless a test's
/// command is known to run longer).
package func run(
    _ executable: String, _ arguments: [String], stdin: String? = nil, timeLimitSeconds: Int = commandTimeLimitSeconds,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws -> (Int32, String, String) {
    let result = try await runOnDedicatedThread(executable, arguments, stdin: stdin, timeLimitSeconds: timeLimitSeconds)
    for marker in sanitizerReportMarkers where result.2.contains(marker) {
        Issue.record("\(marker) in \(executable) \(arguments.joined(separator: " ")):\n\(result.2)", sourceLocation: sourceLocation)
    }
    return result
}

/// How a sanitizer report starts.
package let sanitizerReportMarkers = ["WARNING: ThreadSanitizer", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer"]

private func runOnDedicatedThread(_ executable: String, _ arguments: [String], stdin: String?, timeLimitSeconds: Int) async throws -> (Int32, String, String) {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            do {
                continuation.resume(returning: try runBlocking(executable, arguments, stdin: stdin, timeLimitSeconds: timeLimitSeconds))
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}

/// How long a command run by a test may take before it is killed (and the test fails), by default.
package let commandTimeLimitSeconds = 90

private func runBlocking(_ executable: String, _ arguments: [String], stdin: String?, timeLimitSeconds: Int) throws -> (Int32, String, String) {
    // Files, not pipes: a pipe inherited by another child spawned meanwhile (a long-running openssl
    // s_server, say) would never report end-of-file. Here we only ever wait for our own child to exit.
    let dir = try TestScratch.folder("run")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let inPath = dir + "/in"
    let outPath = dir + "/out"
    let errPath = dir + "/err"
    _ = FileManager.default.createFile(atPath: inPath, contents: Data((stdin ?? "").utf8))
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: inPath))
    let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    let error = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    defer {
        try? input.close()
        try? output.close()
        try? error.close()
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardInput = input
    process.standardOutput = output
    process.standardError = error
    try process.run()
    // A child that hangs is a bug to report, not a reason for the whole test run to stall.
    let pid = process.processIdentifier
    let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(timeLimitSeconds), execute: watchdog)
    process.waitUntilExit()
    watchdog.cancel()
    let stdout = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
    var stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
    if process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL {
        stderr += "\n[killed after \(timeLimitSeconds) s: \(executable) \(arguments.joined(separator: " "))]"
    }
    return (process.terminationStatus, stdout, stderr)
}

/// A new, empty folder of the test's own in the process's scratch folder (``TestScratch``), removed with it
/// when the test process exits.
package func temporaryDirectory() throws -> String {
    try TestScratch.folder("tests")
}

/// A file named `name` holding `text`, in a new temporary folder of its own.
package func temporaryFile(_ name: String, text: String) throws -> String {
    let path = try temporaryDirectory() + "/" + name
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// Stops a helper server process for good (SIGKILL, then reaped), so none outlives its test.
package func stop(_ process: Process) {
    guard process.isRunning else { return }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
}

/// Waits until `process` exits — on a dedicated thread, never on Swift's cooperative pool, where a
/// blocked wait (two, on a 2-core machine) would stall every other test's tasks — and returns its status.
package func exited(_ process: Process) async -> Int32 {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            process.waitUntilExit()
            continuation.resume(returning: process.terminationStatus)
        }
    }
}

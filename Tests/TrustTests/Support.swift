import Foundation
import Testing
import TrustHTTP
import Trust
import TrustLab
import X509

/// One lab PKI per test process (key generation is the slow part).
enum Lab {
    static let pki: LabPKI = {
        do { return try LabPKI.make() } catch { fatalError("cannot make the lab PKI: \(error)") }
    }()

    static var anchors: TrustAnchors { .only(pki.trustedRoots) }

    static func chain(_ server: String) -> [Certificate] { pki.presentedChains[server] ?? [] }

    static func trust(_ server: String, host: String? = nil, at time: Date = Date()) -> ServerTrust {
        let name = host ?? LabPKI.hostName(for: server)
        do {
            return try ServerTrust(presentedChain: chain(server), host: name, evaluationTime: time)
        } catch {
            fatalError("bad host \(name)")
        }
    }

    static func evaluate(_ server: String, host: String? = nil, policy: ValidationPolicy = .webPKI, anchors: TrustAnchors = Lab.anchors) async -> TrustDecision {
        await PathValidator(anchors: anchors, policy: policy).evaluate(trust(server, host: host))
    }
}

extension TrustDecision {
    var codes: [String] { reasons.map(\.code) }
}

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
func run(
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
let sanitizerReportMarkers = ["WARNING: ThreadSanitizer", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer"]

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
let commandTimeLimitSeconds = 90

private func runBlocking(_ executable: String, _ arguments: [String], stdin: String?, timeLimitSeconds: Int) throws -> (Int32, String, String) {
    // Files, not pipes: a pipe inherited by another child spawned meanwhile (a long-running openssl
    // s_server, say) would never report end-of-file. Here we only ever wait for our own child to exit.
    let dir = NSTemporaryDirectory() + "swift-trust-run-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let inPath = dir + "/in", outPath = dir + "/out", errPath = dir + "/err"
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

func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "swift-trust-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Stops a helper server process for good (SIGKILL, then reaped), so none outlives its test.
func stop(_ process: Process) {
    guard process.isRunning else { return }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
}

/// Starts `openssl s_server` listening on 127.0.0.1 at a port the kernel picks (`-accept 127.0.0.1:0`), so it
/// can never collide with a port another test's server holds, and returns once it listens, with the port
/// (read from its `ACCEPT 127.0.0.1:PORT` line). Its later output is drained until it exits; stop it with ``stop(_:)``.
func startOpenSSLServer(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> (Process, Int) {
    struct NoPort: Error, CustomStringConvertible { var description: String }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    process.arguments = ["s_server", "-accept", "127.0.0.1:0"] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let port: Int? = await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            let reader = pipe.fileHandleForReading
            var text = ""
            var found: Int?
            while found == nil {
                let chunk = reader.availableData
                if chunk.isEmpty { break }  // the server exited
                text += String(decoding: chunk, as: UTF8.self)
                if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ACCEPT ") }), let colon = line.lastIndex(of: ":") {
                    found = Int(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                }
            }
            continuation.resume(returning: found)
            while !reader.availableData.isEmpty {}  // keep draining so the server never blocks on a full pipe
        }
    }
    guard let port else {
        stop(process)
        throw NoPort(description: "openssl s_server did not say which port it listens on")
    }
    return (process, port)
}

/// Whether `session` still completes a normal request to a good lab server (`LabServer.start("good", …)`).
///
/// The follow-up request has its own generous deadline: a session built with a 1 s request timeout
/// for the case under test must not fail the follow-up because the machine is busy.
func expectUsable(_ session: Session, _ server: LabServer, sourceLocation: SourceLocation = #_sourceLocation) async {
    do {
        var request = Request(url: url(server))
        request.timeout = .seconds(60)
        let response = try await session.data(for: request)
        #expect(response.statusCode == 200, sourceLocation: sourceLocation)
        #expect(response.text == "hello from good\n", sourceLocation: sourceLocation)
    } catch {
        Issue.record("the session is no longer usable: \(error)", sourceLocation: sourceLocation)
    }
}

/// Runs `body`, returning its SessionError and how long it took to fail.
func timedFailure(_ body: () async throws -> Response) async -> (error: SessionError?, elapsed: Duration) {
    let clock = ContinuousClock()
    let start = clock.now
    let error = await sessionError(body)
    return (error, start.duration(to: clock.now))
}

/// The figure printed for a fault: `fault → code in N ms`.
func report(_ what: String, _ failure: (error: SessionError?, elapsed: Duration)) {
    let milliseconds = failure.elapsed.components.seconds * 1000 + failure.elapsed.components.attoseconds / 1_000_000_000_000_000
    print("[fault] \(what) → \(failure.error.map { "\($0.code)" } ?? "no error") in \(milliseconds) ms")
}

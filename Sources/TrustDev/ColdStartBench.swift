import Foundation
import Trust

/// Whole-process figures for `trust-dev bench`: a fresh `trust evaluate` of a chain against `openssl
/// verify` of the same files, and the bare process start of each tool, in the same run. The `trust`
/// measured is the one built beside this tool (same build folder, so same build flags); the first
/// evaluation in a fresh process runs in this tool (`trust-dev first-evaluation`), which links the same engine.
///
/// A cold process pays what an app pays on its first evaluation (loading the binary, reading the
/// anchors, the first path validation) and nothing is cached between runs. Wall time is the median
/// of the runs, alternating the two commands; CPU time (user + system) is the mean, read from
/// `getrusage(RUSAGE_CHILDREN)` around each run.
extension BenchCommand {
    func benchColdStart(_ chain: BenchChain) throws {
        let name = "cold process: trust evaluate depth-\(chain.depth) \(chain.keyType.rawValue)"
        guard wants(name) || wants("cold") else { return }
        guard let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            print("cold process: skipped (no openssl to compare with)")
            return
        }
        let harness = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let trust = harness.deletingLastPathComponent().appendingPathComponent("trust").path
        guard FileManager.default.isExecutableFile(atPath: trust) else {
            print("cold process: skipped (no \(trust): build `trust` too, e.g. Scripts/release-build.sh trust)")
            return
        }
        let files = try chain.writeFiles()
        defer { try? FileManager.default.removeItem(atPath: files.folder) }
        let (chainFile, rootFile) = (files.chain, files.root)
        let runs = max(5, rounds * 4)

        let evaluate = [trust, "evaluate", "--chain", chainFile, "--anchors", rootFile, "--anchors-only", "--host", chain.host, "--pin", chain.pin.description]
        let verify = [openssl, "verify", "-CAfile", rootFile, "-untrusted", chainFile, chainFile]
        let (ours, theirs) = try Self.alternate(runs, evaluate, verify)
        Self.reportProcess(name + " (name + pin)", ours, "openssl verify (same files)", theirs)
        try benchFirstEvaluation(harness: harness.path, files: files, host: chain.host, runs: runs)
        let (start, opensslStart) = try Self.alternate(runs, [trust, "--version"], [openssl, "version"])
        Self.reportProcess("cold process: trust --version (start only)", start, "openssl version", opensslStart)
    }

    /// The first evaluation inside a fresh process (files, system roots, Public Suffix List, one
    /// validation), against the second evaluation in the same process: medians over `runs` processes.
    func benchFirstEvaluation(harness: String, files: (folder: String, root: String, chain: String), host: String, runs: Int) throws {
        var firsts: [Double] = []
        var seconds: [Double] = []
        for _ in 0..<runs {
            let (status, text) = try Self.output(of: [harness, "first-evaluation", "--chain", files.chain, "--anchor", files.root, "--host", host])
            let fields = text.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            guard status == 0, fields.count == 2 else { throw HarnessError("trust-dev first-evaluation failed (exit \(status))") }
            firsts.append(fields[0])
            seconds.append(fields[1])
        }
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        Self.report("first evaluation in a fresh process (roots, PSL)", .microseconds(median(firsts)), "second, same process", .microseconds(median(seconds)))
    }

    /// Runs `command` (an executable and its arguments) to its end: its exit status and standard output.
    static func output(of command: [String]) throws -> (status: Int32, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Median wall time and mean CPU time of each command, run `runs` times alternately.
    static func alternate(_ runs: Int, _ first: [String], _ second: [String]) throws -> ((wall: Duration, cpu: Duration), (wall: Duration, cpu: Duration)) {
        var samples: [[(Duration, Duration)]] = [[], []]
        for _ in 0..<runs {
            for (index, command) in [first, second].enumerated() {
                samples[index].append(try runOnce(command))
            }
        }
        func summary(_ values: [(Duration, Duration)]) -> (wall: Duration, cpu: Duration) {
            let walls = values.map(\.0).sorted()
            let cpu = values.map(\.1).reduce(Duration.zero, +) / values.count
            return (walls[walls.count / 2], cpu)
        }
        return (summary(samples[0]), summary(samples[1]))
    }

    /// One run: wall time and the CPU time it added to this process's reaped children.
    static func runOnce(_ command: [String]) throws -> (Duration, Duration) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let before = childrenCPU()
        let clock = ContinuousClock()
        let start = clock.now
        try process.run()
        process.waitUntilExit()
        let wall = start.duration(to: clock.now)
        guard process.terminationStatus == 0 else {
            throw HarnessError("\(command.joined(separator: " ")) exited \(process.terminationStatus)")
        }
        return (wall, childrenCPU() - before)
    }

    static func childrenCPU() -> Duration {
        var usage = rusage()
        #if os(Linux)
            getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        #else
            getrusage(RUSAGE_CHILDREN, &usage)
        #endif
        func duration(_ time: timeval) -> Duration { .seconds(Int64(time.tv_sec)) + .microseconds(Int64(time.tv_usec)) }
        return duration(usage.ru_utime) + duration(usage.ru_stime)
    }

    static func reportProcess(_ name: String, _ value: (wall: Duration, cpu: Duration), _ baselineName: String, _ baseline: (wall: Duration, cpu: Duration)) {
        let ms = { (d: Duration) in micros(d) / 1000 }
        print(
            pad(name, 46) + String(format: " %7.2f ms wall, %6.2f ms CPU   ", ms(value.wall), ms(value.cpu)) + pad(baselineName, 26)
                + String(
                    format: " %7.2f ms wall, %6.2f ms CPU   %6.3f× wall, %6.3f× CPU", ms(baseline.wall), ms(baseline.cpu),
                    ms(value.wall) / max(ms(baseline.wall), 1e-9), ms(value.cpu) / max(ms(baseline.cpu), 1e-9)))
    }
}

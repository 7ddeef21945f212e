import ArgumentParser
import Foundation
import Trust
import X509

/// Runs the external conformance suites (x509-limbo, badssl, AFNetworking) against `Trust`.
///
/// Exit status 0 when every mismatch is a known deviation, 1 otherwise.
@main
struct ConformanceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust-conformance",
        abstract: "Run x509-limbo, badssl and AFNetworking conformance suites against the Trust engine.")

    @Option(help: "Folder holding limbo.json, badssl-*.limbo.json and afnetworking-securitypolicy.json.")
    var suites: String = "../shared/conformance"

    @Option(help: "The checked-in list of known deviations.")
    var deviations: String = "Conformance/known-deviations.json"

    @Option(help: "The CT log list (Chrome's v3 schema) the badssl-prod SCTs are checked against.")
    var ctLogList: String = "Conformance/ct-log-list.json"

    @Option(help: "Only run cases whose id contains this text.")
    var filter: String?

    @Flag(help: "Print every case's verdict and reasons.")
    var verbose = false

    @Option(help: "Write one line per mismatch (id, expected, reasons) to this file.")
    var mismatchReport: String?

    func run() async throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: suites, isDirectory: &isDirectory), isDirectory.boolValue else {
            print("conformance: SKIPPED — no suites at \(suites) (the conformance data lives in ../shared/conformance beside the repository)")
            return
        }
        let known = try loadDeviations()
        var report = Report(known: known)

        for name in ["limbo.json", "badssl-prod.limbo.json", "badssl-local.limbo.json"] {
            let path = (suites as NSString).appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: path) else {
                print("conformance: \(name) missing, skipped")
                continue
            }
            let suite = try JSONDecoder().decode(LimboSuite.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            var tally = Tally(name: name)
            for testCase in suite.testcases where testCase.validation_kind == "SERVER" {
                if let filter, !testCase.id.contains(filter) { continue }
                let start = ContinuousClock.now
                let outcome = await LimboRunner.run(testCase)
                let elapsed = ContinuousClock.now - start
                tally.record(testCase.id, outcome: outcome, elapsed: elapsed, report: &report, verbose: verbose)
            }
            tally.print()
            if name == "badssl-prod.limbo.json", FileManager.default.fileExists(atPath: ctLogList) {
                let logList = try CTLogList.load(path: ctLogList)
                var ct = Tally(name: "badssl-prod.limbo.json, Certificate Transparency enforced")
                for testCase in suite.testcases where testCase.validation_kind == "SERVER" {
                    if let filter, !testCase.id.contains(filter) { continue }
                    let start = ContinuousClock.now
                    guard let outcome = await CTRunner.run(testCase, logList: logList) else { continue }
                    ct.record("ct::" + testCase.id, outcome: outcome, elapsed: ContinuousClock.now - start, report: &report, verbose: verbose)
                }
                ct.print()
            }
        }

        let afPath = (suites as NSString).appendingPathComponent("afnetworking-securitypolicy.json")
        if FileManager.default.fileExists(atPath: afPath) {
            let suite = try JSONDecoder().decode(AFNetworkingSuite.self, from: Data(contentsOf: URL(fileURLWithPath: afPath)))
            var tally = Tally(name: "afnetworking-securitypolicy.json")
            for testCase in suite.cases {
                if let filter, !testCase.id.contains(filter) { continue }
                let start = ContinuousClock.now
                let outcome = await AFNetworkingRunner.run(testCase, suite: suite)
                tally.record(testCase.id, outcome: outcome, elapsed: ContinuousClock.now - start, report: &report, verbose: verbose)
            }
            tally.print()
        }

        if let mismatchReport {
            try report.lines.joined(separator: "\n").write(toFile: mismatchReport, atomically: true, encoding: .utf8)
        }
        for id in known.keys.sorted() where !report.seenDeviations.contains(id) && report.ranIDs.contains(id) {
            print("note: known deviation \(id) now passes; remove it from \(deviations)")
        }
        if report.unexpected.isEmpty {
            print("conformance: OK — every mismatch is a known deviation (\(report.seenDeviations.count) listed deviations seen)")
        } else {
            print("conformance: FAILED — \(report.unexpected.count) unexpected mismatches:")
            for line in report.unexpected.prefix(200) { print("  " + line) }
            throw ExitCode(1)
        }
    }

    func loadDeviations() throws -> [String: String] {
        guard FileManager.default.fileExists(atPath: deviations) else { return [:] }
        let list = try JSONDecoder().decode(KnownDeviations.self, from: Data(contentsOf: URL(fileURLWithPath: deviations)))
        return Dictionary(list.deviations.map { ($0.id, $0.reason) }, uniquingKeysWith: { first, _ in first })
    }
}

/// One case's result.
struct CaseOutcome {
    var expectedSuccess: Bool
    var trusted: Bool
    var reasons: [String]
    /// Set when the case is not run (e.g. a CRL case).
    var skipped: String?

    var passed: Bool { expectedSuccess == trusted }
}

struct Report {
    var known: [String: String]
    var unexpected: [String] = []
    var seenDeviations: Set<String> = []
    var ranIDs: Set<String> = []
    var lines: [String] = []
}

struct Tally {
    var name: String
    var run = 0
    var passed = 0
    var skipped = 0
    var knownDeviations = 0
    var slowest: (id: String, duration: Duration) = ("", .zero)
    var pathologicalMax: Duration = .zero

    mutating func record(_ id: String, outcome: CaseOutcome, elapsed: Duration, report: inout Report, verbose: Bool) {
        if let why = outcome.skipped {
            skipped += 1
            if verbose { Swift.print("SKIP \(id): \(why)") }
            return
        }
        run += 1
        report.ranIDs.insert(id)
        if elapsed > slowest.duration { slowest = (id, elapsed) }
        if id.hasPrefix("pathological::") { pathologicalMax = max(pathologicalMax, elapsed) }
        if outcome.passed {
            passed += 1
        } else {
            let line =
                "\(id): expected \(outcome.expectedSuccess ? "SUCCESS" : "FAILURE"), got \(outcome.trusted ? "trusted" : "refused") \(outcome.reasons.joined(separator: " | "))"
            report.lines.append(line)
            if report.known[id] != nil {
                knownDeviations += 1
                report.seenDeviations.insert(id)
            } else {
                report.unexpected.append(line)
            }
        }
        if verbose { Swift.print("\(outcome.passed ? "PASS" : "FAIL") \(id) [\(elapsed)] \(outcome.reasons.joined(separator: " | "))") }
    }

    func print() {
        let rate = run == 0 ? 0 : Double(passed) * 100 / Double(run)
        Swift.print(
            String(
                format: "%@: %d of %d passed (%.2f %%), %d known deviations, %d skipped; slowest case %@ (%@)", name, passed, run, rate, knownDeviations,
                skipped, slowest.id, "\(slowest.duration)"))
        if pathologicalMax > .zero { Swift.print("  slowest pathological::* case: \(pathologicalMax)") }
    }
}

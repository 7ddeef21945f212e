import Foundation
import Testing
import Trust
import TrustLabPKI
import TrustTestSupport
import X509

/// The configuration file's `certificateTransparency` member and top-level `ctLogList`: validated with JSON paths,
/// written back, applied per host, and a stale list warned about by `trust check-config`.
@Suite("Certificate Transparency in the trust configuration file", .paced)
struct CTConfigurationTests {
    /// A folder with the lab's files and a configuration whose `HOST` entry checks CT as `ct` says.
    func write(_ ct: String, host: String, list: String? = "ct/log_list.json") throws -> String {
        let dir = try temporaryDirectory()
        try Lab.pki.write(to: dir)
        let anchors = #"{"certificates": ["roots.pem"], "replaceSystem": true}"#
        let json = """
            {"version": 1, \(list.map { "\"ctLogList\": \"\($0)\"," } ?? "") "base": {"anchors": \(anchors)},
             "hosts": [{"host": "\(host)", "anchors": \(anchors), "certificateTransparency": \(ct)}]}
            """
        try json.write(toFile: dir + "/trust.json", atomically: true, encoding: .utf8)
        return dir
    }

    func decide(_ dir: String, _ server: String) async throws -> TrustDecision {
        let evaluator = try ConfiguredTrustEvaluator(contentsOf: dir + "/trust.json")
        return await evaluator.evaluate(try ServerTrust(presentedChain: Lab.chain(server), host: "\(server).lab.test"))
    }

    @Test func appliedPerHost() async throws {
        let enforce = try write(#"{"mode": "enforce", "customAnchors": true}"#, host: "*.lab.test")
        defer { try? FileManager.default.removeItem(atPath: enforce) }
        #expect(try await decide(enforce, "sct").isTrusted)
        #expect(try await decide(enforce, "one-sct").codes == ["ct-policy-not-met"])
        // Custom anchors exempt unless customAnchors: the lab's anchors are custom.
        let exempt = try write(#"{"mode": "enforce"}"#, host: "*.lab.test")
        defer { try? FileManager.default.removeItem(atPath: exempt) }
        #expect(try await decide(exempt, "one-sct").isTrusted)
        let reportOnly = try write(#"{"mode": "report-only", "customAnchors": true}"#, host: "*.lab.test")
        defer { try? FileManager.default.removeItem(atPath: reportOnly) }
        let noted = try await decide(reportOnly, "bad-sct")
        #expect(noted.isTrusted && noted.notes.contains { $0.contains("report-only") && $0.contains("signature does not verify") }, "\(noted.notes)")
    }

    @Test func validatedWithPathsAndWrittenBack() throws {
        let text =
            #"{"version": 1, "ctLogList": "logs.json", "hosts": [{"host": "a.example", "certificateTransparency": {"mode": "report-only", "customAnchors": true}}]}"#
        let configuration = try TrustConfiguration.parse(text)
        #expect(configuration.ctLogList == "logs.json" && configuration.hosts[0].certificateTransparency == .init(mode: .reportOnly, customAnchors: true))
        #expect(try TrustConfiguration.parse(configuration.jsonText()) == configuration)
        for (bad, path) in [
            (#"{"version": 1, "hosts": [{"host": "a.example", "certificateTransparency": {"mode": "enforce"}}]}"#, "$.hosts[0].certificateTransparency.mode"),
            (#"{"version": 1, "ctLogList": "l.json", "base": {"certificateTransparency": {"mode": "always"}}}"#, "$.base.certificateTransparency.mode"),
            (
                #"{"version": 1, "ctLogList": "l.json", "base": {"certificateTransparency": {"mode": "enforce", "customAnchors": "yes"}}}"#,
                "$.base.certificateTransparency.customAnchors"
            ),
            (#"{"version": 1, "ctLogList": "l.json", "base": {"certificateTransparency": {"mode": "enforce", "extra": 1}}}"#, "$.base.certificateTransparency"),
            (#"{"version": 1, "ctLogList": 3}"#, "$.ctLogList"),
        ] {
            let error = #expect(throws: TrustConfigurationFileError.self) { try TrustConfiguration.parse(bad) }
            #expect(error?.problems.contains { $0.path.hasPrefix(path) } == true, "\(path): \(String(describing: error?.problems))")
        }
        // A list that cannot be read is a problem at $.ctLogList when the evaluator is made (an empty folder: no list).
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let error = #expect(throws: TrustConfigurationFileError.self) {
            try ConfiguredTrustEvaluator(configuration: TrustConfiguration.parse(#"{"version": 1, "ctLogList": "no-such-list.json"}"#), baseDirectory: dir)
        }
        #expect(error?.problems.first?.path == "$.ctLogList")
    }

    @Test func checkConfigWarnsAboutAStaleList() async throws {
        let dir = try write(#"{"mode": "enforce"}"#, host: "*.lab.test", list: "old.json")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try LabCTLog.logList(Lab.pki.ctLogs, timestamp: Date(timeIntervalSinceNow: -80 * 86_400)).write(
            toFile: dir + "/old.json", atomically: true, encoding: .utf8)
        let (status, _, err) = try await run(CLI.binary, ["check-config", dir + "/trust.json"])
        #expect(status == 0 && err.contains("ctLogList: the CT log list was published") && err.contains("not enforced"), "\(err)")
        // A current list: no such warning.
        try Lab.pki.ctLogListJSON.write(toFile: dir + "/old.json", atomically: true, encoding: .utf8)
        let (fresh, _, freshErr) = try await run(CLI.binary, ["check-config", dir + "/trust.json"])
        #expect(fresh == 0 && !freshErr.contains("ctLogList"), "\(freshErr)")
    }

    /// Failure reports (RFC 7469 §3 style) carry CT and revocation outcomes: refusals, and what lenient modes let through.
    @Test func failureReportsCarryThem() async throws {
        func report(_ dir: String, _ server: String) async throws -> PinFailureReport? {
            let evaluator = try ConfiguredTrustEvaluator(contentsOf: dir + "/trust.json")
            return await evaluator.evaluation(for: try ServerTrust(presentedChain: Lab.chain(server), host: "\(server).lab.test"), port: 443).report
        }
        let reportOnly = try write(#"{"mode": "report-only", "customAnchors": true}"#, host: "*.lab.test")
        defer { try? FileManager.default.removeItem(atPath: reportOnly) }
        #expect(try await report(reportOnly, "one-sct")?.validationResult == "ct-policy-not-met")
        #expect(try await report(reportOnly, "sct") == nil)
        let enforce = try write(#"{"mode": "enforce", "customAnchors": true}"#, host: "*.lab.test")
        defer { try? FileManager.default.removeItem(atPath: enforce) }
        let refused = try await report(enforce, "bad-sct")
        #expect(refused?.validationResult == "ct-policy-not-met" && refused?.hostname == "bad-sct.lab.test")
        // Soft revocation without CRLs: allowed, reported as unknown.
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Lab.pki.write(to: dir)
        try #"{"version": 1, "base": {"anchors": {"certificates": ["roots.pem"], "replaceSystem": true}, "revocation": {"mode": "soft"}}}"#
            .write(toFile: dir + "/trust.json", atomically: true, encoding: .utf8)
        let evaluation = await (try ConfiguredTrustEvaluator(contentsOf: dir + "/trust.json")).evaluation(
            for: try ServerTrust(presentedChain: Lab.chain("good"), host: "good.lab.test"), port: 443)
        #expect(evaluation.decision.isTrusted && evaluation.decision.allowedFailures.map(\.code) == ["revocation-status-unknown"])
        #expect(evaluation.report?.validationResult == "revocation-status-unknown")
    }
}

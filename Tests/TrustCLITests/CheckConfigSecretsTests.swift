import Foundation
import Testing
import TrustTestSupport

/// `trust check-config` shows a report URI's user-info as `***` (RFC 3986 §3.2.1: a password in a URL
/// is not for display), in its text and `--json` outputs, for a valid file and in a problem's message.
@Suite("trust check-config never prints a report URI's password", .timeLimit(.minutes(2)))
struct CheckConfigSecretsTests {
    func write(_ text: String) throws -> String { try temporaryFile("config.json", text: text) }

    @Test func validFile() async throws {
        let config = try write(#"{"version": 1, "hosts": [{"host": "good.lab.test", "reportURIs": ["https://reporter:ReportSecret-1@reports.lab.test/r"]}]}"#)
        let text = try await run(CLI.binary, ["check-config", config])
        #expect(text.0 == 0, "\(text.2)")
        #expect(text.1.contains("reports → https://***@reports.lab.test/r"), "\(text.1)")
        let json = try await run(CLI.binary, ["check-config", "--json", config])
        #expect(json.0 == 0, "\(json.2)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.1.utf8)) as? [String: Any])
        let entries = try #require(report["entries"] as? [[String: Any]])
        #expect(entries.last?["reportURIs"] as? [String] == ["https://***@reports.lab.test/r"], "\(json.1)")
        for output in [text.1, text.2, json.1, json.2] {
            #expect(!output.contains("ReportSecret-1") && !output.contains("reporter"), "\(output)")
        }
    }

    /// A report URI refused by the loader is quoted in the problem's message: user-info hidden there too.
    @Test func problemMessage() async throws {
        let config = try write(#"{"version": 1, "hosts": [{"host": "good.lab.test", "reportURIs": ["http://reporter:ReportSecret-2@reports.lab.test/r"]}]}"#)
        let text = try await run(CLI.binary, ["check-config", config])
        #expect(text.0 == 1)
        #expect(text.2.contains("http://***@reports.lab.test/r"), "\(text.2)")
        let json = try await run(CLI.binary, ["check-config", "--json", config])
        #expect(json.0 == 1)
        #expect(json.1.contains("http:\\/\\/***@reports.lab.test\\/r") || json.1.contains("http://***@reports.lab.test/r"), "\(json.1)")
        for output in [text.1, text.2, json.1, json.2] {
            #expect(!output.contains("ReportSecret-2") && !output.contains("reporter"), "\(output)")
        }
    }
}

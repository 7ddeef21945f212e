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

    /// Passwords holding `/`, `?`, `#`, `@` or `:`: hidden whole, in the text and `--json` outputs, valid or refused.
    /// The redaction ended the authority at the first `/`, `?` or `#` and printed `Sl/ashS3cret-88`'s `/ashS3cret-88@…`.
    @Test(arguments: ["Sl/ashS3cret-88", "Qu?estS3cret-1", "Ha#shS3cret-2", "A@tS3cret-3", "Co:lonS3cret-4"])
    func passwordsWithDelimiters(password: String) async throws {
        let secret = String(password.split(whereSeparator: { "/?#@:".contains($0) }).last ?? "")
        for scheme in ["https", "http"] {
            let uri = "\(scheme)://rep-9:\(password)@report.example.test/r"
            let config = try write(#"{"version": 1, "hosts": [{"host": "good.lab.test", "reportURIs": ["\#(uri)"]}]}"#)
            let text = try await run(CLI.binary, ["check-config", config])
            let json = try await run(CLI.binary, ["check-config", "--json", config])
            // Valid only as https with a password that keeps the URL parseable (`@` is taken as %40, `:` splits
            // at the first one); refused (exit 1) otherwise, with the URI quoted in the problem.
            let valid = scheme == "https" && !password.contains(where: { "/?#".contains($0) })
            #expect(text.0 == (valid ? 0 : 1) && json.0 == text.0, "\(text)")
            let shown = text.1 + text.2
            #expect(shown.contains("\(scheme)://***@report.example.test/r"), "\(shown)")
            for output in [text.1, text.2, json.1, json.2] {
                #expect(!output.contains(secret) && !output.contains("rep-9"), "\(scheme), \(password): \(output)")
            }
        }
    }
}

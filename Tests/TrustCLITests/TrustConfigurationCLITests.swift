import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

@Suite("trust check-config and trust get --config", .serialized, .timeLimit(.minutes(5)), .paced)
struct TrustConfigurationCLITests {
    func write(_ text: String) throws -> String { try temporaryFile("trust.json", text: text) }

    @Test func checkConfigExitCodesSummaryAndWarnings() async throws {
        let lab = CLI.lab
        let pin = Lab.pki.intermediate.certificate.spkiPin.description
        let soon = RFC3339.string(Date(timeIntervalSinceNow: 10 * 86_400))
        let valid = try write(
            """
            {"version": 1,
             "base": {"anchors": {"certificates": ["\(lab)/roots.pem"], "replaceSystem": true}},
             "hosts": [{"host": "**.good.lab.test", "pins": {"sha256": ["\(pin)", "sha256/\(Data(repeating: 9, count: 32).base64EncodedString())"], "expires": "\(soon)"},
                        "anchors": {"certificates": ["\(lab)/roots.pem"], "replaceSystem": true}, "reportURIs": ["https://reports.lab.test/r"]}]}
            """)
        let (status, out, err) = try await run(CLI.binary, ["check-config", valid])
        #expect(status == 0, "\(err)")
        #expect(out.contains("**.good.lab.test: ") && out.contains("pins: 2") && out.contains("valid (1 host entry"))
        #expect(err.contains("warning: **.good.lab.test: the pin set expires in"), "\(err)")
        let invalid = try write(
            #"{"version": 1, "hosts": [{"host": "**.lab.test", "pins": {"sha256": ["nope"]}, "colour": 1}, {"host": "x.test", "mode": true}]}"#)
        let (bad, _, problems) = try await run(CLI.binary, ["check-config", invalid])
        #expect(bad == 1)
        for path in ["$.hosts[0].pins.sha256[0]", "$.hosts[0].colour", "$.hosts[1].mode"] { #expect(problems.contains(path + ":"), "\(path) in \(problems)") }
        // Unreadable input: exit 2, as in every command.
        #expect(try await run(CLI.binary, ["check-config", "/nonexistent.json"]).0 == 2)
        #expect(try await run(CLI.binary, ["check-config"]).0 == 2)
    }

    /// `minimumTLSVersion` and `clientIdentity` (TrustNIO's members) are read by every command that reads a file:
    /// `check-config` shows them, and `get` applies the TLS minimum — a server that stops at TLS 1.2 is refused.
    @Test func transportMembersAreReadAndApplied() async throws {
        let server = try await LabServer.start(
            name: "tls12", host: "good.lab.test", chain: Lab.chain("good"), privateKey: try #require(Lab.pki.servers["good"]).privateKey,
            maximumTLSVersion: .tlsv12)
        try await withTeardown({ try? await server.shutdown() }) {
            let lab = CLI.lab
            func config(_ members: String) throws -> String {
                try write(
                    """
                    {"version": 1, "hosts": [{"host": "good.lab.test", \(members)
                      "anchors": {"certificates": ["\(lab)/roots.pem"], "replaceSystem": true}}]}
                    """)
            }
            let both = try config(
                #""minimumTLSVersion": "1.3", "clientIdentity": {"certificate": "clients/client/chain.pem", "key": "clients/client/key.pem"},"#)
            let (checked, summary, checkErr) = try await run(CLI.binary, ["check-config", both])
            #expect(checked == 0, "\(checkErr)")
            #expect(summary.contains("TLS ≥ 1.3") && summary.contains("client identity"), "\(summary)")
            let base = ["get", "https://good.lab.test:\(server.port)/", "--resolve", "good.lab.test:\(server.port):127.0.0.1", "-o", "/dev/null"]
            let (refused, _, why) = try await run(CLI.binary, base + ["--config", try config(#""minimumTLSVersion": "1.3","#)])
            #expect(refused != 0 && why.contains("TLS 1.3"), "\(refused): \(why)")
            let (fetched, _, fetchErr) = try await run(CLI.binary, base + ["--config", try config(#""minimumTLSVersion": "1.2","#)])
            #expect(fetched == 0, "\(fetchErr)")
        }
    }

    @Test func getWithAConfiguration() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        try await withTeardown({ try? await server.shutdown() }) {
            let lab = CLI.lab
            let pin = Lab.pki.intermediate.certificate.spkiPin.description
            let backup = "sha256/" + Data(repeating: 9, count: 32).base64EncodedString()
            func config(_ pins: String, mode: String = "enforce") throws -> String {
                try write(
                    """
                    {"version": 1, "hosts": [{"host": "good.lab.test", "mode": "\(mode)", "pins": {"sha256": [\(pins)]},
                      "anchors": {"certificates": ["\(lab)/roots.pem"], "replaceSystem": true}}]}
                    """)
            }
            let base = ["get", server.baseURL + "/", "--resolve", "good.lab.test:\(server.port):127.0.0.1", "-o", "/dev/null"]
            #expect(try await run(CLI.binary, base + ["--config", try config("\"\(pin)\", \"\(backup)\"")]).0 == 0)
            let (refused, _, why) = try await run(
                CLI.binary, base + ["--config", try config("\"\(backup)\", \"sha256/\(Data(repeating: 8, count: 32).base64EncodedString())\"")])
            #expect(refused == 60)
            #expect(why.contains("pin"), "\(why)")
            #expect(try await run(CLI.binary, base + ["--config", try config("\"\(backup)\"", mode: "report-only")]).0 == 0)
            #expect(try await run(CLI.binary, base + ["--config", try config("\"\(pin)\"")]).0 == 2)  // one pin, enforced: invalid
            #expect(try await run(CLI.binary, base + ["--config", try config("\"\(pin)\", \"\(backup)\""), "--pin", pin]).0 == 2)
        }
    }

    /// A proxy CA in debugOverrides is honoured by this (debug) build;
    /// `.ci/run` runs the same command with a release build and requires the refusal.
    @Test func debugOverridesThroughTheCLI() async throws {
        let lab = CLI.lab
        let config = try write(
            """
            {"version": 1, "hosts": [{"host": "untrusted-root.lab.test", "anchors": {"certificates": ["\(lab)/roots.pem"], "replaceSystem": true},
              "debugOverrides": {"anchors": {"certificates": ["\(lab)/untrusted-root.pem"]}, "overridesPins": true}}]}
            """)
        let (status, out, err) = try await run(
            CLI.binary, ["evaluate", "--config", config, "--chain", lab + "/untrusted-root/chain.pem", "--host", "untrusted-root.lab.test"])
        #if DEBUG
            #expect(status == 0, "\(out) \(err)")
            #expect(out.contains("debug override"), "\(out)")
        #else
            #expect(status == 1)
        #endif
        // Without the override: refused either way.
        let plain = try write(
            """
            {"version": 1, "hosts": [{"host": "untrusted-root.lab.test", "anchors": {"certificates": ["\(lab)/roots.pem"], "replaceSystem": true}}]}
            """)
        #expect(
            try await run(CLI.binary, ["evaluate", "--config", plain, "--chain", lab + "/untrusted-root/chain.pem", "--host", "untrusted-root.lab.test"]).0 == 1
        )
    }
}

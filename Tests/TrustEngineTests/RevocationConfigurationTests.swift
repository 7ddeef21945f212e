import Foundation
import Testing
import Trust
import TrustLabPKI
import TrustTestSupport
import X509

/// The configuration file's `revocation` member: validated with JSON paths, written back, and applied per host.
@Suite("Revocation in the trust configuration file", .paced)
struct RevocationConfigurationTests {
    /// A folder with the lab's anchors and CRLs and a configuration whose `good.lab.test` entry checks revocation as `revocation` says.
    func write(_ revocation: String) throws -> String {
        let dir = try temporaryDirectory()
        try Lab.pki.write(to: dir)
        let good = try #require(Lab.pki.servers["good"])
        try LabCRL(issuer: Lab.pki.intermediate, revoked: [LabCRL.Revoked(good.certificate, reason: .superseded)]).pem
            .write(toFile: dir + "/revoked.pem", atomically: true, encoding: .utf8)
        let json = """
            {"version": 1, "base": {"anchors": {"certificates": ["roots.pem"], "replaceSystem": true}},
             "hosts": [{"host": "good.lab.test", "anchors": {"certificates": ["roots.pem"], "replaceSystem": true}, "revocation": \(revocation)}]}
            """
        try json.write(toFile: dir + "/trust.json", atomically: true, encoding: .utf8)
        return dir
    }

    func decide(_ dir: String) async throws -> TrustDecision {
        let evaluator = try ConfiguredTrustEvaluator(contentsOf: dir + "/trust.json")
        return await evaluator.evaluate(try ServerTrust(presentedChain: Lab.chain("good"), host: "good.lab.test"))
    }

    @Test func appliedPerHost() async throws {
        let revoked = try write(#"{"mode": "hard", "crls": ["revoked.pem"]}"#)
        defer { try? FileManager.default.removeItem(atPath: revoked) }
        let decision = try await decide(revoked)
        #expect(decision.codes == ["revoked"] && decision.reasons.first?.description.contains("superseded") == true, "\(decision.reasons)")
        // The lab's own CRLs (root and intermediate; they revoke other certificates) leave `good` trusted under chain checking.
        let good = try write(#"{"mode": "hard", "depth": "chain", "crls": ["crls/all.pem"]}"#)
        defer { try? FileManager.default.removeItem(atPath: good) }
        #expect(try await decide(good).isTrusted)
        // Soft without CRLs: trusted, with a note.
        let soft = try write(#"{"mode": "soft"}"#)
        defer { try? FileManager.default.removeItem(atPath: soft) }
        let softDecision = try await decide(soft)
        #expect(softDecision.isTrusted && softDecision.notes.contains { $0.contains("revocation checking is soft") })
    }

    @Test func problemsHaveJSONPaths() throws {
        let cases: [(String, String)] = [
            (#"{"mode": "sometimes"}"#, "$.hosts[0].revocation.mode"),
            (#"{"depth": "leaf"}"#, "$.hosts[0].revocation.mode"),
            (#"{"mode": "soft", "depth": "root"}"#, "$.hosts[0].revocation.depth"),
            (#"{"mode": "hard"}"#, "$.hosts[0].revocation.crls"),
            (#"{"mode": "soft", "crls": "one.pem"}"#, "$.hosts[0].revocation.crls"),
            (#"{"mode": "soft", "extra": 1}"#, "$.hosts[0].revocation.extra"),
            (#"{"mode": "hard", "crls": ["missing.pem"]}"#, "$.hosts[0].revocation.crls[0]"),
        ]
        for (member, path) in cases {
            let dir = try write(member)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            do {
                _ = try ConfiguredTrustEvaluator(contentsOf: dir + "/trust.json")
                Issue.record("\(member) accepted")
            } catch {
                #expect(error.problems.contains { $0.path == path }, "\(member): \(error.problems)")
            }
        }
    }

    @Test func writtenBackAsRead() throws {
        let text = """
            {"version": 1, "hosts": [{"host": "api.example.com", "revocation": {"mode": "hard", "depth": "chain", "crls": ["a.pem", "b.crl"], "exemptShortLived": false}}]}
            """
        let configuration = try TrustConfiguration.parse(text)
        let entry = try #require(configuration.hosts.first?.revocation)
        #expect(entry == TrustConfiguration.Revocation(mode: .hard, depth: .chain, crls: ["a.pem", "b.crl"], exemptShortLived: false))
        #expect(try TrustConfiguration.parse(configuration.jsonText()) == configuration)
    }
}

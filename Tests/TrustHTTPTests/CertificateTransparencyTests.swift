import Foundation
import SwiftASN1
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport
import X509

/// Certificate Transparency (RFC 6962) against lab logs: SCTs issued through the precertificate flow, checked
/// against a log list in Chrome's schema, decided as Apple's and Chrome's CT policies do, in report-only and enforce
/// modes, through the engine and through a TrustHTTPClient's handshake.
@Suite("Certificate Transparency", .serialized, .timeLimit(.minutes(5)), .paced)
struct CertificateTransparencyTests {
    static let alpha1 = LabCTLog(description: "lab Alpha 1", operatorName: "Alpha")
    static let alpha2 = LabCTLog(description: "lab Alpha 2", operatorName: "Alpha")
    static let beta = LabCTLog(description: "lab Beta", operatorName: "Beta")
    static let unlisted = LabCTLog(description: "not on the list", operatorName: "Gamma")
    static let listText = LabCTLog.logList([alpha1, alpha2, beta])

    static func policy(_ mode: CertificateTransparencyPolicy.Mode, list: CTLogList? = nil, customAnchors: Bool = true) throws -> ValidationPolicy {
        var policy = ValidationPolicy.webPKI
        policy.certificateTransparency = CertificateTransparencyPolicy(
            mode: mode, logList: try list ?? CTLogList(json: listText), appliesToCustomAnchors: customAnchors)
        return policy
    }

    static func evaluate(_ leaf: LabIdentity, _ policy: ValidationPolicy) async throws -> TrustDecision {
        await PathValidator(anchors: Lab.anchors, policy: policy).evaluate(try ServerTrust(presentedChain: leaf.chain, host: "ct.lab.test"))
    }

    /// {0, 1, 2 of one operator, 2 operators, a bad signature, an unknown log, a future timestamp} × {report-only, enforce}.
    @Test func theMatrix() async throws {
        let cases: [(String, [LabSCT], Bool)] = [
            ("no SCT", [], false),
            ("one SCT", [.good(Self.alpha1)], false),
            ("two SCTs, one operator", [.good(Self.alpha1), .good(Self.alpha2)], false),
            ("two SCTs, two operators", [.good(Self.alpha1), .good(Self.beta)], true),
            ("a bad signature", [.badSignature(Self.alpha1), .good(Self.beta)], false),
            ("an unknown log", [.good(Self.unlisted), .good(Self.beta)], false),
            ("a future timestamp", [.futureTimestamp(Self.alpha1), .good(Self.beta)], false),
        ]
        var failures: [String] = []
        for (name, scts, meets) in cases {
            let leaf = try Lab.pki.intermediate.leaf(dnsNames: ["ct.lab.test"], scts: scts)
            let server = try await LabServer.start(name: "ct", host: "ct.lab.test", chain: leaf.chain, privateKey: leaf.privateKey)
            for mode in [CertificateTransparencyPolicy.Mode.reportOnly, .enforce] {
                let policy = try Self.policy(mode)
                let decision = try await Self.evaluate(leaf, policy)
                let refused = mode == .enforce && !meets
                if refused {
                    if decision.codes != ["ct-policy-not-met"] { failures.append("\(name) \(mode): \(decision.codes)") }
                } else if !decision.isTrusted {
                    failures.append("\(name) \(mode): refused \(decision.reasons)")
                } else if !meets && !decision.notes.contains(where: { $0.contains("Certificate Transparency") && $0.contains("report-only") }) {
                    failures.append("\(name) \(mode): no report-only note \(decision.notes)")
                }
                // Through a TrustHTTPClient's handshake.
                let session = try labSession(PathValidator(anchors: Lab.anchors, policy: policy)) { $0.resolve["ct.lab.test"] = "127.0.0.1" }
                var error: TrustHTTPClientError?
                do {
                    _ = try await session.data(for: TrustHTTPClientRequest(url: URL(string: "https://ct.lab.test:\(server.port)/")!))
                } catch let caught as TrustHTTPClientError {
                    error = caught
                }
                if refused != (error != nil) || (refused && error?.trustDecision?.codes != ["ct-policy-not-met"]) {
                    failures.append("\(name) \(mode) through the Session: \(String(describing: error))")
                }
                await session.shutdown()
            }
            try await server.shutdown()
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test func reasonsCarryTheCounts() async throws {
        let leaf = try Lab.pki.intermediate.leaf(dnsNames: ["ct.lab.test"], scts: [.good(Self.alpha1), .badSignature(Self.alpha2), .good(Self.unlisted)])
        let decision = try await Self.evaluate(leaf, Self.policy(.enforce))
        guard
            case .certificateTransparencyPolicyNotMet(_, let valid, let required, let operators, let requiredOperators, let invalid, let unknown, let detail)? =
                decision.reasons.first?.detail
        else {
            Issue.record("\(decision.reasons)")
            return
        }
        #expect(valid == 1 && required == 2 && operators == 1 && requiredOperators == 2 && invalid == 1 && unknown == 1)
        #expect(detail.contains("lab Alpha 2: its signature does not verify") && detail.contains(Data(Self.unlisted.logID).base64EncodedString()), "\(detail)")
        // The report, as trust inspect shows it.
        let report = CertificateTransparencyReport.check(
            leaf: leaf.certificate, issuer: Lab.pki.intermediate.certificate, policy: try Self.policy(.enforce).certificateTransparency, at: Date())
        #expect(report.entries.map(\.log?.operatorName) == ["Alpha", "Alpha", nil])
    }

    @Test func lifetimeLogStatesIntervalsAndExemptions() async throws {
        // Valid for more than 180 days: three SCTs are required.
        let long = try Lab.pki.intermediate.leaf(
            dnsNames: ["ct.lab.test"], scts: [.good(Self.alpha1), .good(Self.beta)], notAfter: Date(timeIntervalSinceNow: 200 * 86_400))
        #expect(try await Self.evaluate(long, Self.policy(.enforce)).codes == ["ct-policy-not-met"])
        let longThree = try Lab.pki.intermediate.leaf(
            dnsNames: ["ct.lab.test"], scts: [.good(Self.alpha1), .good(Self.alpha2), .good(Self.beta)], notAfter: Date(timeIntervalSinceNow: 200 * 86_400))
        #expect(try await Self.evaluate(longThree, Self.policy(.enforce)).isTrusted)
        // A log retired before the SCT's timestamp, a pending log, a log whose interval excludes the expiry: not counted.
        var retired = Self.beta
        retired.state = .retired
        retired.stateTimestamp = Date(timeIntervalSinceNow: -7_200)
        var pending = Self.beta
        pending.state = .pending
        var sharded = Self.beta
        sharded.temporalInterval = Date(timeIntervalSinceNow: 365 * 86_400)..<Date(timeIntervalSinceNow: 730 * 86_400)
        let leaf = try Lab.pki.intermediate.leaf(dnsNames: ["ct.lab.test"], scts: [.good(Self.alpha1), .good(Self.beta)])
        for (log, expected) in [(retired, "was retired from"), (pending, "is pending"), (sharded, "temporal interval")] {
            let list = try CTLogList(json: LabCTLog.logList([Self.alpha1, Self.alpha2, log]))
            let decision = try await Self.evaluate(leaf, Self.policy(.enforce, list: list))
            #expect(
                decision.codes == ["ct-policy-not-met"] && decision.reasons.first?.description.contains(expected) == true, "\(expected): \(decision.reasons)")
        }
        // Retired after the SCT: still counts.
        retired.stateTimestamp = Date(timeIntervalSinceNow: -60)
        #expect(try await Self.evaluate(leaf, Self.policy(.enforce, list: CTLogList(json: LabCTLog.logList([Self.alpha1, retired])))).isTrusted)
        // Custom anchors are exempt unless the policy applies to them.
        let bare = try Lab.pki.intermediate.leaf(dnsNames: ["ct.lab.test"], scts: [])
        let exempt = try await Self.evaluate(bare, Self.policy(.enforce, customAnchors: false))
        #expect(exempt.isTrusted && !exempt.notes.contains { $0.contains("Transparency") }, "\(exempt.notes)")
        // A log list more than 70 days old is not enforced, and the decision says why.
        let old = try CTLogList(json: LabCTLog.logList([Self.alpha1, Self.beta], timestamp: Date(timeIntervalSinceNow: -71 * 86_400)))
        let stale = try await Self.evaluate(bare, Self.policy(.enforce, list: old))
        #expect(stale.isTrusted && stale.notes.contains { $0.contains("not enforced") && $0.contains("71 days") }, "\(stale.notes)")
    }

    @Test func malformedInputIsATypedError() throws {
        // Log lists: a key that does not hash to its ID, bad base64, no operators, a bad state.
        let good = Self.listText
        let swapped = good.replacingOccurrences(of: Data(Self.alpha1.logID).base64EncodedString(), with: Data(Self.beta.logID).base64EncodedString())
        for (text, expected) in [
            (swapped, "not the SHA-256 of the key"), ("{}", "$.operators"), ("[", "not JSON"),
            (good.replacingOccurrences(of: "\"usable\"", with: "\"shiny\""), ".state"),
        ] {
            let error = #expect(throws: CTLogList.ParseError.self) { try CTLogList(json: text) }
            #expect(error?.detail.contains(expected) == true, "\(expected): \(String(describing: error))")
        }
        // SCT lists: every truncation of a real one is an error, never a crash; a malformed list refuses under enforce.
        let leaf = try Lab.pki.intermediate.leaf(dnsNames: ["ct.lab.test"], scts: [.good(Self.alpha1), .good(Self.beta)])
        let ext = try #require(leaf.certificate.extensions[oid: SignedCertificateTimestamp.extensionOID])
        let list = Array(try ASN1OctetString(derEncoded: ext.value).bytes)
        #expect(try SignedCertificateTimestamp.parseList(list).count == 2)
        for length in 0..<list.count {
            #expect(throws: SignedCertificateTimestamp.ParseError.self) { try SignedCertificateTimestamp.parseList(Array(list.prefix(length))) }
        }
        #expect(throws: SignedCertificateTimestamp.ParseError.self) { try SignedCertificateTimestamp.parseList(list + [0]) }
        #expect(throws: SignedCertificateTimestamp.ParseError.self) { try SignedCertificateTimestamp.parseList([0x00, 0x00]) }
        #expect(throws: SignedCertificateTimestamp.ParseError.self) { try SignedCertificateTimestamp.parseList([0x00, 0x05, 0x00, 0x03, 0x00]) }
    }

    /// The CLI contract: `--ct off|report-only|enforce` and `--ct-log-list FILE` on evaluate, get and inspect; a leaf
    /// short of SCTs → evaluate 1, get 60 with the reason on stderr; bad usage or a bad list → 2.
    @Test func cli() async throws {
        let lab = CLI.lab
        let list = lab + "/ct/log_list.json"
        func evaluate(_ server: String, _ extra: [String]) async throws -> (Int32, String, String) {
            try await run(
                CLI.binary,
                [
                    "evaluate", "--anchors", lab + "/roots.pem", "--anchors-only", "--chain", lab + "/\(server)/chain.pem",
                    "--host", "\(server).lab.test",
                ] + extra)
        }
        #expect(try await evaluate("sct", ["--ct", "enforce", "--ct-log-list", list]).0 == 0)
        #expect(try await evaluate("sct", ["--ct-log-list", list]).0 == 0)  // a list alone: enforce
        for server in ["no-sct", "one-sct", "bad-sct"] {
            let (status, out, _) = try await evaluate(server, ["--ct", "enforce", "--ct-log-list", list])
            #expect(status == 1 && out.contains("ct-policy-not-met"), "\(server): \(out)")
            let (reportOnly, noted, _) = try await evaluate(server, ["--ct", "report-only", "--ct-log-list", list])
            #expect(reportOnly == 0 && noted.contains("report-only"), "\(server): \(noted)")
        }
        #expect(try await evaluate("one-sct", []).0 == 0)  // no CT option: not checked
        #expect(try await evaluate("one-sct", ["--ct", "off", "--ct-log-list", list]).0 == 0)
        // Usage: a mode without a list, an unknown mode, a missing or bad list, with --config.
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "{\"operators\": 3}".write(toFile: dir + "/bad.json", atomically: true, encoding: .utf8)
        for extra in [
            ["--ct", "enforce"], ["--ct", "sometimes", "--ct-log-list", list], ["--ct-log-list", dir + "/missing.json"], ["--ct-log-list", dir + "/bad.json"],
            ["--ct-log-list", list, "--config", dir + "/missing.json"],
        ] {
            let (status, _, err) = try await evaluate("sct", extra)
            #expect(status == 2, "\(extra): \(status) \(err)")
        }
        // A list more than 70 days old: a warning, and CT is not enforced.
        let old = LabCTLog.logList(Lab.pki.ctLogs, timestamp: Date(timeIntervalSinceNow: -100 * 86_400))
        try old.write(toFile: dir + "/old.json", atomically: true, encoding: .utf8)
        let (staleStatus, staleOut, staleErr) = try await evaluate("one-sct", ["--ct", "enforce", "--ct-log-list", dir + "/old.json"])
        #expect(staleStatus == 0 && staleErr.contains("more than 70 days") && staleOut.contains("not enforced"), "\(staleOut) \(staleErr)")
        // get and inspect against the lab's servers.
        try await withLabServers(["sct", "one-sct"]) { servers in
            let good = try #require(servers["sct"])
            let short = try #require(servers["one-sct"])
            func get(_ server: LabServer) async throws -> (Int32, String, String) {
                try await run(
                    CLI.binary,
                    [
                        "get", server.baseURL + "/", "--resolve", "\(server.host):\(server.port):127.0.0.1", "--cacert", lab + "/roots.pem",
                        "--anchors-only", "--ct", "enforce", "--ct-log-list", list, "-o", "/dev/null",
                    ])
            }
            #expect(try await get(good).0 == 0)
            let (status, _, err) = try await get(short)
            #expect(status == 60 && err.contains("Certificate Transparency"), "\(err)")
            let inspect = [
                "inspect", short.baseURL, "--resolve", "\(short.host):\(short.port):127.0.0.1", "--cacert", lab + "/roots.pem", "--anchors-only",
                "--ct", "enforce", "--ct-log-list", list,
            ]
            let (inspectStatus, text, _) = try await run(CLI.binary, inspect)
            #expect(
                inspectStatus == 1 && text.contains("certificate transparency: 1 valid SCT of 2 required")
                    && text.contains("SCT from swift-trust lab Alpha 1 (swift-trust lab Alpha) at"), "\(text)")
            let (_, json, _) = try await run(CLI.binary, inspect + ["--json"])
            let report = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
            let scts = report?["scts"] as? [[String: Any]]
            #expect(
                scts?.count == 1 && scts?.first?["status"] as? String == "valid" && scts?.first?["operator"] as? String == "swift-trust lab Alpha", "\(json)")
        }
    }
}

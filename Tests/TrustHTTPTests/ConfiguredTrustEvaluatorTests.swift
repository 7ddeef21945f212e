import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

@Suite("Trust configuration: evaluation, expiry, report-only, debug overrides", .paced)
struct ConfiguredTrustEvaluatorTests {
    static let psl = PublicSuffixList(contents: "test\ncom\n")
    static let rootPEM = Lab.pki.root.certificate.pemString
    static let intermediatePin = Lab.pki.intermediate.certificate.spkiPin.description
    static let backupPin = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()
    static let otherPins = ["sha256/" + Data(repeating: 1, count: 32).base64EncodedString(), "sha256/" + Data(repeating: 2, count: 32).base64EncodedString()]

    func evaluator(_ hostEntry: String) throws -> ConfiguredTrustEvaluator {
        let text = """
            {"version": 1, "base": {"anchors": {"pem": [\(String(reflecting: Self.rootPEM))], "replaceSystem": true}},
             "hosts": [\(hostEntry)]}
            """
        return try ConfiguredTrustEvaluator(configuration: try TrustConfiguration.parse(text, publicSuffixes: Self.psl))
    }

    func anchored(_ host: String, _ rest: String) -> String {
        #"{"host": "\#(host)", "anchors": {"pem": [\#(String(reflecting: Self.rootPEM))], "replaceSystem": true}, \#(rest)}"#
    }

    @Test func pinsOnTheValidatedPathAndReports() async throws {
        let good = Lab.trust("good")
        let pinned = try evaluator(anchored("**.good.lab.test", #""pins": {"sha256": ["\#(Self.intermediatePin)", "\#(Self.backupPin)"]}"#))
        let ok = await pinned.evaluation(for: good, port: 443)
        #expect(ok.decision.isTrusted && ok.report == nil && ok.matched?.description == "**.good.lab.test")
        // The append attack: another trusted CA's leaf + the pinned intermediate appended.
        let mitm = await pinned.evaluation(for: Lab.trust("mitm", host: "good.lab.test"), port: 443)
        #expect(!mitm.decision.isTrusted)
        // Wrong pins, enforced: refused, with a report naming the chains and pins.
        let wrong = try evaluator(
            anchored(
                "good.lab.test", #""pins": {"sha256": ["\#(Self.otherPins[0])", "\#(Self.otherPins[1])"]}, "reportURIs": ["https://collector.lab.test/r"]"#))
        let refused = await wrong.evaluation(for: good, port: 8443)
        #expect(!refused.decision.isTrusted)
        let report = try #require(refused.report)
        #expect(report.hostname == "good.lab.test" && report.port == 8443 && report.enforceMode && report.validationResult == "pin-validation-failed")
        #expect(report.servedCertificateChain.count == 2 && report.knownPins.count == 2)
        // The path that validated but for the pins (leaf, intermediate, root), as RFC 7469 §3 reports it.
        #expect(report.validatedCertificateChain.count == 3)
        #expect(refused.reportURIs.map(\.absoluteString) == ["https://collector.lab.test/r"])
        // A chain refused for more than its pins validated nowhere: no validated chain in its report.
        let expired = await wrong.evaluation(for: Lab.trust("expired", host: "good.lab.test"), port: 8443)
        #expect(try #require(expired.report).validatedCertificateChain.isEmpty)
        let json = String(decoding: report.json(), as: UTF8.self)
        #expect(json.contains("\"noted-hostname\":\"good.lab.test\"") && json.contains("\"validated-certificate-chain\""))
    }

    @Test func reportOnlyLetsTheConnectionThroughAndReports() async throws {
        let evaluator = try evaluator(anchored("good.lab.test", #""mode": "report-only", "pins": {"sha256": ["\#(Self.otherPins[0])"]}"#))
        let result = await evaluator.evaluation(for: Lab.trust("good"), port: 443)
        #expect(result.decision.isTrusted)
        #expect(result.report?.enforceMode == false)
        #expect(result.report?.validatedCertificateChain.count == 3)
        #expect(result.warnings.contains { $0.contains("report-only") })
        // What report-only let through is typed, for observers and metrics, as well as worded.
        #expect(result.decision.allowedFailures.map(\.code) == ["pin-mismatch"])
        if case .pinMismatch(let seen, let expected)? = result.decision.allowedFailures.first?.detail {
            #expect(expected.map(\.description) == [Self.otherPins[0]] && !seen.isEmpty)
        }
        #expect(result.decision.notes.contains { $0.contains("report-only") })
        // Report-only never rescues a chain that fails validation itself.
        let expired = await evaluator.evaluation(for: Lab.trust("expired", host: "good.lab.test"), port: 443)
        #expect(!expired.decision.isTrusted)
    }

    /// At the expiry instant (UTC) pins stop being enforced — with a warning and a report, never silently.
    @Test func pinExpiryBoundary() async throws {
        let expires = "2030-01-01T00:00:00Z"
        let evaluator = try evaluator(
            anchored("good.lab.test", #""pins": {"sha256": ["\#(Self.otherPins[0])", "\#(Self.otherPins[1])"], "expires": "\#(expires)"}"#))
        let boundary = try #require(RFC3339.parse(expires))
        // Before the expiry (now < 2030): enforced; after it (an expiry a second ago): not enforced, but said.
        let before = await evaluator.evaluation(for: Lab.trust("good"), port: 443)
        #expect(!before.decision.isTrusted)  // now < 2030: enforced, wrong pins
        let pastEvaluator = try self.evaluator(
            anchored(
                "good.lab.test",
                #""pins": {"sha256": ["\#(Self.otherPins[0])", "\#(Self.otherPins[1])"], "expires": "\#(RFC3339.string(Date(timeIntervalSinceNow: -1)))"}"#))
        let after = await pastEvaluator.evaluation(for: Lab.trust("good"), port: 443)
        #expect(after.decision.isTrusted)
        #expect(after.warnings.contains { $0.contains("expired") })
        #expect(after.report?.validationResult == "pin-set-expired")
        let pins = TrustConfiguration.Pins(sha256: [], expires: boundary)
        #expect(!pins.isExpired(at: boundary.addingTimeInterval(-0.001)))
        #expect(pins.isExpired(at: boundary))
    }

    /// Debug override anchors work in DEBUG builds only.
    @Test func debugOverridesExistOnlyInDebugBuilds() async throws {
        let proxyCA = Lab.pki.untrustedRoot.certificate.pemString
        let evaluator = try evaluator(
            anchored(
                "untrusted-root.lab.test",
                #""pins": {"sha256": ["\#(Self.otherPins[0])", "\#(Self.otherPins[1])"]}, "debugOverrides": {"anchors": {"pem": [\#(String(reflecting: proxyCA))]}, "overridesPins": true}"#
            ))
        let result = await evaluator.evaluation(for: Lab.trust("untrusted-root"), port: 443)
        #if DEBUG
            #expect(result.decision.isTrusted)
            #expect(result.warnings.contains { $0.contains("debug override") })
            // The acceptance is an override of the entry's refusal, which it keeps.
            #expect(result.decision.override?.origin == .debugOverride)
            #expect(!result.decision.evaluatorDecision.isTrusted && !result.decision.validatedPath.isEmpty)
        #else
            #expect(!result.decision.isTrusted)
        #endif
    }

    /// A report-only failure: the connection succeeds; the collector gets the report once for two identical failures.
    @Test func reportOnlyThroughTheSessionReachesTheCollectorOnce() async throws {
        let good = try await LabServer.start("good", pki: Lab.pki)
        let collector = try await LabServer.start("good", pki: Lab.pki)
        let entry = anchored(
            "good.lab.test",
            #""mode": "report-only", "pins": {"sha256": ["\#(Self.otherPins[0])"]}, "reportURIs": ["https://good.lab.test:\#(collector.port)/reports"]"#)
        let evaluator = try evaluator(entry)
        var reporting = TrustHTTPClientConfiguration()
        reporting.serverTrust = DefaultTrustEvaluator(anchors: Lab.anchors)  // the reporter's own trust policy
        reporting.resolve = LabPKI.loopbackResolve
        // A delivery timeout past a loaded machine's loopback handshake: what is checked is that the report arrives.
        let reporter = PinFailureReporter(configuration: reporting, limits: PinFailureReporter.Limits(deliveryTimeout: .seconds(30)))
        var configuration = TrustHTTPClientConfiguration()
        configuration.serverTrust = evaluator
        configuration.pinFailureReporter = reporter
        configuration.resolve = LabPKI.loopbackResolve
        configuration.evaluationCache = nil
        for _ in 0..<2 {
            let session = try TrustHTTPClient(configuration: configuration)  // a new connection each time
            #expect(try await session.data(for: TrustHTTPClientRequest(url: url(good, "/"))).statusCode == 200)
            await session.shutdown()
        }
        await reporter.flush()
        #expect(collector.reports.reports.count == 1)
        let report = try #require(collector.reports.reports.first.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] })
        #expect(report["hostname"] as? String == "good.lab.test")
        #expect(report["enforce-mode"] as? Bool == false)
        #expect((report["served-certificate-chain"] as? [String])?.count == 2)
        // After the window, the same failure is reported again.
        let later = Date(timeIntervalSinceNow: PinFailureReporter.deduplicationWindow + 1)
        let evaluation = await evaluator.evaluation(for: Lab.trust("good"), port: good.port)
        #expect(reporter.submit(try #require(evaluation.report), to: evaluation.reportURIs) == false)
        #expect(reporter.submit(try #require(evaluation.report), to: evaluation.reportURIs, now: later) == true)
        await reporter.flush()
        try await good.shutdown()
        try await collector.shutdown()
    }

    /// Per-host TLS minimum and client identity from the configuration, through the TrustHTTPClient.
    @Test func sessionAppliesTLSMinimumAndClientIdentityPerEntry() async throws {
        let lab = CLI.lab
        let text = """
            {"version": 1, "base": {"anchors": {"certificates": ["\(lab)/roots.pem"], "replaceSystem": true}},
             "hosts": [{"host": "good.lab.test", "minimumTLSVersion": "1.3", "anchors": {"certificates": ["\(lab)/roots.pem"], "replaceSystem": true}},
                       {"host": "*.good.lab.test", "anchors": {"certificates": ["roots.pem"], "replaceSystem": true},
                        "clientIdentity": {"certificate": "clients/client/chain.pem", "key": "clients/client/key.pem"}}]}
            """
        let evaluator = try ConfiguredTrustEvaluator(
            configuration: try TrustConfiguration.parse(text, publicSuffixes: Self.psl), baseDirectory: lab)
        var configuration = TrustHTTPClientConfiguration()
        configuration.serverTrust = evaluator
        configuration.resolve = LabPKI.loopbackResolve
        let session = try TrustHTTPClient(configuration: configuration)
        let tls12 = try await LabServer.start(
            name: "old", host: "good.lab.test", chain: Lab.pki.servers["good"]!.chain, privateKey: Lab.pki.servers["good"]!.privateKey,
            maximumTLSVersion: .tlsv12)
        let refused = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(tls12, "/"))) }
        #expect(refused?.code == .secureConnectionFailed && refused?.message.contains("TLS 1.3") == true, "\(String(describing: refused))")
        let tls13 = try await LabServer.start("good", pki: Lab.pki)
        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(tls13, "/"))).statusCode == 200)
        let mtls = try await LabServer.start(mutualTLS: .required, pki: Lab.pki)
        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(mtls, "/whoami"))).text.contains("lab client"))
        await session.shutdown()
        for server in [tls12, tls13, mtls] { try await server.shutdown() }
    }
}

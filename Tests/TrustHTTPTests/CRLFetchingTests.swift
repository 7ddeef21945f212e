import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport
import X509

/// CRLs fetched from the distribution points certificates name (RFC 5280 §4.2.1.13), through the project's own TrustHTTPClient:
/// cached until nextUpdate, one fetch in flight per URL, conditional refetches, bounded, failures named.
@Suite("Revocation: CRLs fetched from distribution points", .serialized, .timeLimit(.minutes(5)), .paced)
struct CRLFetchingTests {
    /// A leaf under the lab intermediate naming `uri` as its CRL distribution point.
    static func leaf(_ uri: String) throws -> LabIdentity {
        try Lab.pki.intermediate.leaf(dnsNames: ["fetch.lab.test"], crlDistributionPoints: [uri])
    }

    static func evaluator(_ mode: RevocationPolicy.Mode, limits: CRLFetcher.Limits = CRLFetcher.Limits(timeout: PatientFetchers.timeout)) throws
        -> RevocationCheckingEvaluator
    {
        var policy = ValidationPolicy.webPKI
        policy.revocation = RevocationPolicy(mode: mode)
        // A fetch budget far past the fetcher's own limits: these tests are about fetching, and a loaded machine
        // must not turn a fetch into the budget's "no answer within" (RevocationBudgetTests covers the budget).
        return try RevocationCheckingEvaluator(anchors: Lab.anchors, policy: policy, fetcher: try CRLFetcher(limits: limits), fetchBudget: .seconds(60))
    }

    static func trust(_ leaf: LabIdentity, at time: Date = Date()) throws -> ServerTrust {
        try ServerTrust(presentedChain: leaf.chain, host: "fetch.lab.test", evaluationTime: time)
    }

    @Test func fetchedCRLsDecideAndAreCached() async throws {
        let server = try await LabCRLServer.start()
        let revoked = try Self.leaf(server.url("issuing.crl"))
        let good = try Self.leaf(server.url("issuing.crl"))
        server.publish(
            try LabCRL(issuer: Lab.pki.intermediate, revoked: [LabCRL.Revoked(revoked.certificate, reason: .keyCompromise)]).crl, as: "issuing.crl",
            delay: .milliseconds(100))
        let evaluator = try Self.evaluator(.hard)
        // Twenty evaluations at once: one fetch.
        let decisions = await withTaskGroup(of: TrustDecision.self) { group in
            for index in 0..<20 {
                let trust = try? Self.trust(index.isMultiple(of: 2) ? revoked : good)
                group.addTask { await evaluator.evaluate(trust ?? ServerTrust(presentedChain: [], peerName: nil)) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(server.requestCount("issuing.crl") == 1)
        #expect(decisions.filter(\.isTrusted).count == 10)
        #expect(decisions.filter { $0.codes == ["revoked"] }.count == 10)
        // Cached until nextUpdate: no new request, and a direct answer inside a handshake.
        #expect(try await evaluator.evaluate(Self.trust(good)).isTrusted)
        #expect(evaluator.decisionWithoutSuspending(try Self.trust(good))?.isTrusted == true)
        #expect(server.requestCount("issuing.crl") == 1)
        await evaluator.shutdown()
        await server.shutdown()
    }

    @Test func staleCRLsAreAskedForAgainConditionally() async throws {
        let server = try await LabCRLServer.start()
        let leaf = try Self.leaf(server.url("stale.crl"))
        server.publish(
            try LabCRL(issuer: Lab.pki.intermediate, thisUpdate: Date(timeIntervalSinceNow: -7_200), nextUpdate: Date(timeIntervalSinceNow: -3_600)).crl,
            as: "stale.crl")
        let evaluator = try Self.evaluator(.hard)
        let first = try await evaluator.evaluate(Self.trust(leaf))
        #expect(first.codes == ["revocation-status-unknown"] && first.reasons.first?.description.contains("stale") == true, "\(first.reasons)")
        // Still stale: asked again, with If-None-Match, and answered 304 (the server counts both).
        let second = try await evaluator.evaluate(Self.trust(leaf))
        #expect(second.codes == ["revocation-status-unknown"])
        #expect(server.requestCount("stale.crl") == 2 && server.notModifiedCount("stale.crl") == 1)
        #expect(evaluator.fetcher.cache.entry(for: server.url("stale.crl"))?.entityTag != nil)
        // A new CRL is published: the next evaluation gets it (a different tag) and the leaf is good.
        server.publish(try LabCRL(issuer: Lab.pki.intermediate).crl, as: "stale.crl")
        #expect(try await evaluator.evaluate(Self.trust(leaf)).isTrusted)
        await evaluator.shutdown()
        await server.shutdown()
    }

    @Test(arguments: [RevocationPolicy.Mode.soft, .hard])
    func unreachableAndHostileDistributionPoints(_ mode: RevocationPolicy.Mode) async throws {
        // A port that refuses connections for the whole test: bound (so no other suite's server can take it) but
        // never listening. A port closed after use could be handed to a parallel suite's server meanwhile.
        let refusing = try RefusingPort()
        defer { refusing.close() }
        let closedPort = refusing.port
        let malformed = try await LabCRLServer.start()
        malformed.publish(bytes: Array("<html>not a CRL</html>".utf8), as: "page.crl")
        var truncated = try LabCRL(issuer: Lab.pki.intermediate).crl.derBytes
        truncated.removeLast(10)
        malformed.publish(bytes: truncated, as: "truncated.crl")
        let endless = try await LabHostileServer.startPlain(.endlessBody)
        let trickle = try await LabHostileServer.startPlain(.trickleBody, trickleInterval: .milliseconds(50))
        // Each failure is named: nothing listening, a body over the size cap, a body trickled past the timeout, no http(s) point.
        // `small` is about the size cap: its timeout is PatientFetchers', so a loaded machine cannot turn "malformed"
        // or "404" into a timeout; `patient` (1 s) is the one that must time out.
        let small = CRLFetcher.Limits(maximumSize: 64 << 10, timeout: PatientFetchers.timeout)
        let patient = CRLFetcher.Limits(maximumSize: 4 << 20, timeout: .seconds(1))
        let cases: [(String, CRLFetcher.Limits, String)] = [
            ("http://127.0.0.1:\(closedPort)/gone.crl", small, "failed: cannotConnectToHost"),
            ("http://127.0.0.1:\(endless.port)/huge.crl", small, "failed: responseTooLarge"),
            ("http://127.0.0.1:\(trickle.port)/slow.crl", patient, "failed: timedOut"),
            ("ldap://ldap.lab.test/cn=crl", small, "names no http or https CRL distribution point"),
            (malformed.url("page.crl"), small, "failed: malformed CRL"),
            (malformed.url("truncated.crl"), small, "failed: malformed CRL"),
            (malformed.url("missing.crl"), small, "failed: HTTP status 404"),
        ]
        for (uri, limits, expected) in cases {
            let evaluator = try Self.evaluator(mode, limits: limits)
            let decision = try await evaluator.evaluate(Self.trust(try Self.leaf(uri)))
            if mode == .hard {
                #expect(decision.codes == ["revocation-status-unknown"], "\(uri): \(decision.reasons)")
                #expect(decision.reasons.first?.description.contains(expected) == true, "\(uri): \(decision.reasons)")
            } else {
                #expect(decision.isTrusted && decision.notes.contains { $0.contains(expected) }, "\(uri): \(decision.notes)")
            }
            // A failure is remembered: asking again at once does not fetch again.
            #expect(evaluator.fetcher.isSettled(for: try Self.leaf(uri).chain, depth: .leaf, at: Date()) || !uri.hasPrefix("http"))
            await evaluator.shutdown()
        }
        await endless.shutdown()
        await trickle.shutdown()
        await malformed.shutdown()
    }

    @Test func cliFetchesUnlessToldNotTo() async throws {
        let crls = try await LabCRLServer.start()
        let leaf = try Self.leaf(crls.url("cli.crl"))
        crls.publish(try LabCRL(issuer: Lab.pki.intermediate, revoked: [LabCRL.Revoked(leaf.certificate, reason: .affiliationChanged)]).crl, as: "cli.crl")
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try leaf.chainPEM.write(toFile: dir + "/chain.pem", atomically: true, encoding: .utf8)
        let base = ["evaluate", "--anchors", CLI.lab + "/roots.pem", "--anchors-only", "--chain", dir + "/chain.pem", "--host", "fetch.lab.test"]
        // A run the fetch budget cut short on a loaded machine is run again (runOnTime); each run asks at most once.
        var attempts = 0
        let (status, out, _) = try await runOnTime(base + ["--revocation", "hard"], attempts: &attempts)
        #expect(status == 1 && out.contains("affiliationChanged"), "\(out)")
        #expect((1...attempts).contains(crls.requestCount("cli.crl")), "\(crls.requestCount("cli.crl")) fetches in \(attempts) runs")
        let (offline, offlineOut, _) = try await run(CLI.binary, base + ["--revocation", "hard", "--no-fetch"])
        #expect(offline == 1 && offlineOut.contains("revocation-status-unknown"), "\(offlineOut)")
        #expect(crls.requestCount("cli.crl") == 1)
        #expect(try await run(CLI.binary, base).0 == 0)  // no revocation option: nothing checked, nothing fetched
        #expect(crls.requestCount("cli.crl") == 1)
        await crls.shutdown()
    }

    @Test func inspectShowsEachCertificatesStatus() async throws {
        let crls = try await LabCRLServer.start()
        let revoked = try Lab.pki.intermediate.leaf(dnsNames: ["good.lab.test"], crlDistributionPoints: [crls.url("inspect.crl")])
        let good = try Lab.pki.intermediate.leaf(dnsNames: ["good.lab.test"], crlDistributionPoints: [crls.url("inspect.crl")])
        crls.publish(
            try LabCRL(issuer: Lab.pki.intermediate, revoked: [LabCRL.Revoked(revoked.certificate, reason: .cessationOfOperation)]).crl, as: "inspect.crl")
        var attempts = 0
        for (identity, expectedStatus, expectedExit) in [(revoked, "revoked", Int32(1)), (good, "good", Int32(0))] {
            let server = try await LabServer.start(name: "inspect-crl", host: "good.lab.test", chain: identity.chain, privateKey: identity.privateKey)
            let base = [
                "inspect", "https://good.lab.test:\(server.port)", "--resolve", "good.lab.test:\(server.port):127.0.0.1",
                "--cacert", CLI.lab + "/roots.pem", "--anchors-only", "--revocation", "hard",
            ]
            let (status, out, err) = try await runOnTime(base, attempts: &attempts)
            #expect(status == expectedExit, "\(out) \(err)")
            #expect(
                out.contains("revocation (hard, leaf):") && out.contains("only the leaf is checked") && out.contains("the anchor is trusted as configured"),
                "\(out)")
            if expectedStatus == "revoked" {
                #expect(out.contains("REVOKED") && out.contains("cessationOfOperation"), "\(out)")
            } else {
                #expect(out.contains(": good — CRL issued by") && out.contains("next update"), "\(out)")
            }
            let (_, json, _) = try await runOnTime(base + ["--json"], attempts: &attempts)
            let report = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
            let rows = report?["revocation"] as? [[String: String]]
            #expect(rows?.map { $0["status"] ?? "" } == [expectedStatus, "not-checked", "not-checked"], "\(json)")
            try await server.shutdown()
        }
        // A new process each time: nothing cached between them (one fetch per run, a run the budget cut short
        // having fetched too, or not yet).
        #expect(attempts == 4 ? crls.requestCount("inspect.crl") == 4 : (4...attempts).contains(crls.requestCount("inspect.crl")))
        await crls.shutdown()
    }

    @Test func throughTheSession() async throws {
        let crls = try await LabCRLServer.start()
        let leaf = try Lab.pki.intermediate.leaf(dnsNames: ["good.lab.test"], crlDistributionPoints: [crls.url("session.crl")])
        crls.publish(try LabCRL(issuer: Lab.pki.intermediate, revoked: [LabCRL.Revoked(leaf.certificate)]).crl, as: "session.crl")
        let server = try await LabServer.start(name: "revoked", host: "good.lab.test", chain: leaf.chain, privateKey: leaf.privateKey)
        let evaluator = try Self.evaluator(.hard)
        let session = try PatientFetchers.session(evaluator)
        let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(server, "/"))) }
        #expect(error?.code == .serverCertificateUntrusted && error?.trustDecision?.codes == ["revoked"], "\(String(describing: error))")
        await session.shutdown()
        await evaluator.shutdown()
        try await server.shutdown()
        await crls.shutdown()
    }
}

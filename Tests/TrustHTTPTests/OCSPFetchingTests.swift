import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport
import X509

/// OCSP responders asked through the project's own TrustHTTPClient (RFC 6960 Appendix A, RFC 5019): SHA-256 first and SHA-1
/// when refused, GET when short, POST with a nonce, cached until nextUpdate, failures named under soft and hard
/// checking, CRLs as the fallback, through a TrustHTTPClient's handshake and the CLI.
@Suite("Revocation: OCSP responders asked", .serialized, .timeLimit(.minutes(5)), .paced)
struct OCSPFetchingTests {
    static func leaf(_ responder: LabOCSPResponder?, crl: String? = nil) throws -> LabIdentity {
        try Lab.pki.intermediate.leaf(
            dnsNames: ["ocsp.lab.test"], crlDistributionPoints: crl.map { [$0] } ?? [], ocspResponders: responder.map { [$0.url] } ?? [])
    }

    static func evaluator(_ mode: RevocationPolicy.Mode, depth: RevocationPolicy.Depth = .leaf, options: OCSPFetcher.Options = OCSPFetcher.Options()) throws
        -> RevocationCheckingEvaluator
    {
        var policy = ValidationPolicy.webPKI
        policy.revocation = RevocationPolicy(mode: mode, depth: depth)
        // Fetchers and a budget far past a loaded machine's loopback delays (PatientFetchers): these tests are about
        // what the answers mean.
        return try RevocationCheckingEvaluator(
            anchors: Lab.anchors, policy: policy, fetcher: try PatientFetchers.crl(), ocspFetcher: try PatientFetchers.ocsp(options: options),
            fetchBudget: PatientFetchers.fetchBudget)
    }

    static func trust(_ leaf: LabIdentity) throws -> ServerTrust {
        try ServerTrust(presentedChain: leaf.chain, host: "ocsp.lab.test")
    }

    static func responder() async throws -> LabOCSPResponder {
        try await LabOCSPResponder.start(authorities: [Lab.pki.intermediate, Lab.pki.root])
    }

    @Test func answersDecideAndAreCached() async throws {
        let responder = try await Self.responder()
        let good = try Self.leaf(responder)
        let revoked = try Self.leaf(responder)
        responder.set(.revoked(at: Date(timeIntervalSinceNow: -600), reason: .keyCompromise), for: revoked.certificate)
        let evaluator = try Self.evaluator(.hard)
        let decision = try await evaluator.evaluate(Self.trust(good))
        #expect(decision.isTrusted, "\(decision.reasons)")
        // The decision lasts as long as the response: until its nextUpdate (7 days).
        #expect((decision.validity?.upperBound.timeIntervalSinceNow ?? 0) > 6 * 86_400)
        let refused = try await evaluator.evaluate(Self.trust(revoked))
        #expect(refused.codes == ["revoked"] && refused.reasons.first?.description.contains("keyCompromise") == true, "\(refused.reasons)")
        #expect(refused.reasons.first?.description.contains("OCSP responder \(responder.url)") == true, "\(refused.reasons)")
        // RFC 5019: SHA-256 CertID, by GET, no nonce.
        #expect(responder.received.count == 2)
        #expect(responder.received.allSatisfy { $0.method == "GET" && $0.request?.certificateIDs.first?.hashAlgorithm == .sha256 && $0.request?.nonce == nil })
        // Cached: no new request, and answered inside the handshake.
        #expect(evaluator.decisionWithoutSuspending(try Self.trust(good))?.isTrusted == true)
        #expect(try await evaluator.evaluate(Self.trust(revoked)).codes == ["revoked"])
        #expect(responder.received.count == 2)
        // Twenty concurrent evaluations of a new certificate: one request.
        let fresh = try Self.leaf(responder)
        let decisions = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                let trust = try? Self.trust(fresh)
                group.addTask { await evaluator.evaluate(trust ?? ServerTrust(presentedChain: [], peerName: nil)).isTrusted }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(decisions.allSatisfy { $0 } && responder.received.count == 3)
        await evaluator.shutdown()
        await responder.shutdown()
    }

    @Test func sha1WhenSHA256IsRefusedAndNoncesByPOST() async throws {
        let responder = try await Self.responder()
        responder.update { $0.refusesSHA256 = true }
        let evaluator = try Self.evaluator(.hard)
        #expect(try await evaluator.evaluate(Self.trust(Self.leaf(responder))).isTrusted)
        #expect(responder.received.map { $0.request?.certificateIDs.first?.hashAlgorithm } == [.sha256, .sha1])
        // That responder is asked with SHA-1 from then on.
        #expect(try await evaluator.evaluate(Self.trust(Self.leaf(responder))).isTrusted)
        #expect(responder.received.count == 3 && responder.received.last?.request?.certificateIDs.first?.hashAlgorithm == .sha1)
        await evaluator.shutdown()
        // With nonces: POST, the nonce echoed; a responder echoing another nonce is not believed.
        let nonces = try Self.evaluator(.hard, options: OCSPFetcher.Options(nonce: true))
        responder.update { $0.refusesSHA256 = false }
        #expect(try await nonces.evaluate(Self.trust(Self.leaf(responder))).isTrusted)
        #expect(responder.received.last?.method == "POST" && responder.received.last?.request?.nonce?.count == 32)
        responder.update { $0.variation.nonce = [0xBA, 0xD0] }
        let wrong = try await nonces.evaluate(Self.trust(Self.leaf(responder)))
        #expect(wrong.codes == ["revocation-status-unknown"] && wrong.reasons.first?.description.contains("nonce") == true, "\(wrong.reasons)")
        await nonces.shutdown()
        await responder.shutdown()
    }

    @Test func failuresAreNamedSoftAllowsHardRefuses() async throws {
        let responder = try await Self.responder()
        let refusing = try RefusingPort()
        defer { refusing.close() }
        let down = try Lab.pki.intermediate.leaf(dnsNames: ["ocsp.lab.test"], ocspResponders: ["http://127.0.0.1:\(refusing.port)/"])
        let behaviours: [(String, (inout LabOCSPResponder.Behaviour) -> Void)] = [
            ("tryLater", { $0.status = .tryLater }),
            ("malformed OCSP message", { $0.rawBody = Array("<html>captive portal</html>".utf8) }),
            ("HTTP status 500", { $0.httpStatus = 500 }),
            (
                "lacks extendedKeyUsage id-kp-OCSPSigning",
                { $0.signer = .delegate((try? LabOCSP.responder(issuedBy: Lab.pki.intermediate, ocspSigning: false)) ?? Lab.pki.intermediate.identity) }
            ),
            (
                "stale",
                {
                    $0.variation.thisUpdate = -7_200
                    $0.variation.nextUpdate = -3_600
                }
            ),
        ]
        for (expected, change) in behaviours {
            responder.update {
                $0 = LabOCSPResponder.Behaviour()
                change(&$0)
            }
            let leaf = try Self.leaf(responder)
            let hard = try Self.evaluator(.hard)
            let refused = try await hard.evaluate(Self.trust(leaf))
            #expect(
                refused.codes == ["revocation-status-unknown"] && refused.reasons.first?.description.contains(expected) == true,
                "\(expected): \(refused.reasons)")
            let soft = try Self.evaluator(.soft)
            let allowed = try await soft.evaluate(Self.trust(leaf))
            #expect(allowed.isTrusted && allowed.notes.contains { $0.contains(expected) }, "\(expected): \(allowed.notes)")
            await hard.shutdown()
            await soft.shutdown()
        }
        let hard = try Self.evaluator(.hard)
        let unreachable = try await hard.evaluate(Self.trust(down))
        #expect(
            unreachable.codes == ["revocation-status-unknown"] && unreachable.reasons.first?.description.contains("127.0.0.1:\(refusing.port)") == true,
            "\(unreachable.reasons)")
        await hard.shutdown()
        await responder.shutdown()
    }

    @Test func crlsAreTheFallbackAndRevokedWins() async throws {
        let responder = try await Self.responder()
        let crls = try await LabCRLServer.start()
        // The responder is down for this leaf: its CRL decides (revoked).
        let leaf = try Self.leaf(responder, crl: crls.url("fallback.crl"))
        crls.publish(try LabCRL(issuer: Lab.pki.intermediate, revoked: [LabCRL.Revoked(leaf.certificate, reason: .superseded)]).crl, as: "fallback.crl")
        responder.update { $0.status = .internalError }
        let evaluator = try Self.evaluator(.hard)
        let decision = try await evaluator.evaluate(Self.trust(leaf))
        #expect(decision.codes == ["revoked"] && decision.reasons.first?.description.contains("CRL issued by") == true, "\(decision.reasons)")
        #expect(crls.requestCount("fallback.crl") == 1)
        await evaluator.shutdown()
        // OCSP answers good: the CRL is not fetched at all.
        responder.update { $0 = LabOCSPResponder.Behaviour() }
        let other = try Self.leaf(responder, crl: crls.url("unused.crl"))
        let fresh = try Self.evaluator(.hard)
        #expect(try await fresh.evaluate(Self.trust(other)).isTrusted)
        #expect(crls.requestCount("unused.crl") == 0)
        // Both speak and disagree: revoked wins, whichever says it.
        let both = try Self.leaf(responder, crl: crls.url("both.crl"))
        responder.set(.revoked(at: Date(timeIntervalSinceNow: -60), reason: nil), for: both.certificate)
        crls.publish(try LabCRL(issuer: Lab.pki.intermediate).crl, as: "both.crl")
        var policy = ValidationPolicy.webPKI
        let cache = OCSPCache()
        policy.revocation = RevocationPolicy(mode: .hard, crls: [try LabCRL(issuer: Lab.pki.intermediate).crl], ocspCache: cache)
        cache.store(
            OCSPCache.Entry(
                response: try OCSPResponse(
                    derEncoded: LabOCSP.response(
                        about: both.certificate, issuer: Lab.pki.intermediate, status: .revoked(at: Date(timeIntervalSinceNow: -60), reason: .caCompromise)))),
            for: both.certificate)
        let validator = PathValidator(anchors: Lab.anchors, policy: policy)
        #expect(await validator.evaluate(try Self.trust(both)).codes == ["revoked"])
        // …and a good response beside a CRL that lists the certificate: still revoked.
        cache.store(
            OCSPCache.Entry(response: try OCSPResponse(derEncoded: LabOCSP.response(about: both.certificate, issuer: Lab.pki.intermediate, status: .good))),
            for: both.certificate)
        policy.revocation.crls = [try LabCRL(issuer: Lab.pki.intermediate, revoked: [LabCRL.Revoked(both.certificate)]).crl]
        #expect(await PathValidator(anchors: Lab.anchors, policy: policy).evaluate(try Self.trust(both)).codes == ["revoked"])
        // A response stored under the certificate but about another one decides nothing.
        let stranger = try Lab.pki.intermediate.leaf(dnsNames: ["ocsp.lab.test"])
        cache.store(
            OCSPCache.Entry(response: try OCSPResponse(derEncoded: LabOCSP.response(about: stranger.certificate, issuer: Lab.pki.intermediate, status: .good))),
            for: both.certificate)
        policy.revocation.crls = []
        let misfiled = await PathValidator(anchors: Lab.anchors, policy: policy).evaluate(try Self.trust(both))
        #expect(
            misfiled.codes == ["revocation-status-unknown"] && misfiled.reasons.first?.description.contains("no status for this certificate") == true,
            "\(misfiled.reasons)")
        await fresh.shutdown()
        await crls.shutdown()
        await responder.shutdown()
    }

    @Test func chainDepthAsksForEveryCA() async throws {
        let responder = try await Self.responder()
        // An intermediate that names the responder, and a leaf under it.
        let intermediate = try Lab.pki.root.intermediate(commonName: "OCSP-checked intermediate", ocspResponders: [responder.url])
        let leaf = try intermediate.leaf(dnsNames: ["ocsp.lab.test"], ocspResponders: [responder.url])
        // The responder serves the root's certificates (the intermediate), not the new intermediate's: its answer about
        // the leaf is signed by someone the leaf's issuer never authorised, so it decides nothing.
        let evaluator = try Self.evaluator(.hard, depth: .chain)
        let decision = try await evaluator.evaluate(Self.trust(leaf))
        #expect(decision.codes == ["revocation-status-unknown"] && decision.reasons.count == 1, "\(decision.reasons)")
        #expect(decision.reasons.first?.description.contains("neither CN=OCSP-checked intermediate") == true, "\(decision.reasons.map(\.description))")
        responder.set(.revoked(at: Date(timeIntervalSinceNow: -60), reason: .caCompromise), for: intermediate.certificate)
        let revokedCA = try await Self.evaluator(.hard, depth: .chain).evaluate(Self.trust(intermediate.leaf(dnsNames: ["ocsp.lab.test"])))
        #expect(revokedCA.codes.contains("revoked") && revokedCA.reasons.contains { $0.description.contains("cACompromise") }, "\(revokedCA.reasons)")
        await evaluator.shutdown()
        await responder.shutdown()
    }

    @Test func throughTheSessionAndTheCLI() async throws {
        let responder = try await Self.responder()
        let leaf = try Lab.pki.intermediate.leaf(dnsNames: ["good.lab.test"], ocspResponders: [responder.url])
        responder.set(.revoked(at: Date(timeIntervalSinceNow: -60), reason: .privilegeWithdrawn), for: leaf.certificate)
        let server = try await LabServer.start(name: "ocsp-revoked", host: "good.lab.test", chain: leaf.chain, privateKey: leaf.privateKey)
        let evaluator = try Self.evaluator(.hard)
        // The handshake waits for the patient fetcher: its own 10 s default once cut the OCSP answer short on a
        // loaded machine, and the decision was `revocation-status-unknown`.
        let session = try PatientFetchers.session(evaluator)
        let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(server, "/"))) }
        #expect(error?.code == .serverCertificateUntrusted && error?.trustDecision?.codes == ["revoked"], "\(String(describing: error))")
        await session.shutdown()
        await evaluator.shutdown()
        // The CLI: evaluate and get ask the responder; --no-ocsp does not; --no-fetch asks nothing.
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try leaf.chainPEM.write(toFile: dir + "/chain.pem", atomically: true, encoding: .utf8)
        let base = ["evaluate", "--anchors", CLI.lab + "/roots.pem", "--anchors-only", "--chain", dir + "/chain.pem", "--host", "good.lab.test"]
        // A run the fetch budget cut short on a loaded machine is run again (runOnTime): each asks the responder at
        // most once (one cut short may have been cut before its request arrived), the last one surely.
        let before = responder.received.count
        var asked = 0
        let (status, out, _) = try await runOnTime(base + ["--revocation", "hard"], attempts: &asked)
        #expect(status == 1 && out.contains("privilegeWithdrawn") && out.contains("OCSP"), "\(out)")
        let afterEvaluate = responder.received.count
        #expect((before + 1...before + asked).contains(afterEvaluate), "\(afterEvaluate - before) requests in \(asked) runs")
        let (noOCSP, noOCSPOut, _) = try await run(CLI.binary, base + ["--revocation", "hard", "--no-ocsp"])
        #expect(noOCSP == 1 && noOCSPOut.contains("revocation-status-unknown") && responder.received.count == afterEvaluate, "\(noOCSPOut)")
        #expect(try await run(CLI.binary, base + ["--revocation", "soft", "--no-ocsp"]).0 == 0)
        let (nonce, nonceOut, _) = try await runOnTime(base + ["--revocation", "hard", "--ocsp-nonce"], attempts: &asked)
        #expect(nonce == 1 && responder.received.last?.method == "POST" && responder.received.last?.request?.nonce != nil, "\(nonceOut)")
        #expect(try await run(CLI.binary, base + ["--no-ocsp"]).0 == 2)  // needs --revocation
        let get = [
            "get", "https://good.lab.test:\(server.port)/", "--resolve", "good.lab.test:\(server.port):127.0.0.1",
            "--cacert", CLI.lab + "/roots.pem", "--anchors-only", "--revocation", "hard",
        ]
        var attempts = 0
        let (getStatus, _, getErr) = try await runOnTime(get, attempts: &attempts)
        #expect(getStatus == 60 && getErr.contains("privilegeWithdrawn"), "\(getErr)")
        try await server.shutdown()
        await responder.shutdown()
    }

    /// A responder that stalls, floods, or answers about another certificate: unknown, within the timeout, bounded.
    @Test func hostileResponders() async throws {
        let responder = try await Self.responder()
        // The stall is cut by a short timeout; the other cases get a long one, so a loaded machine cannot turn
        // "too large" or "another serial" into a timeout.
        func evaluate(_ mode: RevocationPolicy.Mode, timeout: Duration) async throws -> (TrustDecision, Duration) {
            let limits = OCSPFetcher.Limits(maximumSize: 64 << 10, timeout: timeout)
            var policy = ValidationPolicy.webPKI
            policy.revocation = RevocationPolicy(mode: mode)
            // The fetch budget far past the fetcher's own timeout: what each case shows is the fetcher's verdict, which a
            // loaded machine must not turn into the budget's "no answer within" (covered by RevocationBudgetTests);
            // beside a release build, an 800 ms timeout has fired 10 s late.
            let evaluator = try RevocationCheckingEvaluator(
                anchors: Lab.anchors, policy: policy, ocspFetcher: try OCSPFetcher(limits: limits), fetchBudget: timeout + .seconds(60))
            let started = ContinuousClock.now
            let decision = await evaluator.evaluate(try Self.trust(Self.leaf(responder)))
            let elapsed = ContinuousClock.now - started
            await evaluator.shutdown()
            return (decision, elapsed)
        }
        let cases: [(String, Duration, (inout LabOCSPResponder.Behaviour) -> Void)] = [
            // The responder would answer after 300 s: only the fetcher's timeout can end the wait within the bound below.
            ("timed out", .milliseconds(800), { $0.delay = .seconds(300) }),
            ("too large", .seconds(20), { $0.rawBody = [UInt8](repeating: 0x30, count: 4 << 20) }),
            ("no status for this certificate", .seconds(20), { $0.answersForAnotherSerial = true }),
        ]
        for (expected, timeout, change) in cases {
            responder.update {
                $0 = LabOCSPResponder.Behaviour()
                change(&$0)
            }
            let (hard, elapsed) = try await evaluate(.hard, timeout: timeout)
            #expect(hard.codes == ["revocation-status-unknown"] && hard.reasons.first?.description.contains(expected) == true, "\(expected): \(hard.reasons)")
            // Ended by the fetcher, before the budget and long before a stalled responder would answer, with room for
            // a loaded machine (the deadline tests live with the TrustHTTPClient's).
            #expect(elapsed < timeout + .seconds(50), "\(expected): \(elapsed)")
            let (soft, _) = try await evaluate(.soft, timeout: timeout)
            #expect(soft.isTrusted && soft.notes.contains { $0.contains(expected) }, "\(expected): \(soft.notes)")
        }
        await responder.shutdown()
    }
}

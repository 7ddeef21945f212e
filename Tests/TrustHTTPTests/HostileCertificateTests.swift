import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport
import X509

@Suite(
    "Hostile certificates: a 100-certificate chain, a 10,000-name leaf, a cycle — in the engine and through the Session",
    .serialized, .timeLimit(.minutes(5)), .paced)
struct HostileCertificateTests {
    /// The TrustHTTPClient's anchors: the lab's, plus the hostile roots (so the good server still works).
    static var anchors: TrustAnchors {
        .only(
            Lab.pki.trustedRoots + [
                HostileLab.longChain.root.certificate, HostileLab.manyNames.root.certificate,
                HostileLab.manyLongNames.root.certificate,
            ])
    }

    func session(
        _ evaluator: any TrustEvaluator = DefaultTrustEvaluator(anchors: HostileCertificateTests.anchors),
        hosts: [String]
    ) throws -> TrustHTTPClient {
        try labSession(evaluator) { configuration in
            for host in hosts { configuration.resolve[host] = "127.0.0.1" }
            configuration.requestTimeout = .seconds(30)
            configuration.evaluationCache = nil
        }
    }

    // MARK: - 100-certificate chain

    @Test func longChainInTheEngine() async throws {
        let chain = HostileLab.longChain
        #expect(chain.presentedChain.count == 100)
        let trust = try ServerTrust(presentedChain: chain.presentedChain, host: chain.host)
        // The Web-PKI policy allows 8 intermediates: a typed refusal.
        let refused = await timed("100-certificate chain, Web-PKI policy") {
            await PathValidator(anchors: .only([chain.root.certificate])).evaluate(trust)
        }
        #expect(!refused.isTrusted)
        #expect(refused.codes.contains("path-too-long"), "\(refused.codes)")
        // A policy that allows 99 intermediates: the path validates, every certificate on it.
        var policy = ValidationPolicy.webPKI
        policy.maximumIntermediates = 99
        let accepted = await timed("100-certificate chain, 99 intermediates allowed") {
            await PathValidator(anchors: .only([chain.root.certificate]), policy: policy).evaluate(trust)
        }
        #expect(accepted.isTrusted, "\(accepted.reasons)")
        #expect(accepted.validatedPath.count == 101)
        // Without its anchor: no path, and the search ends.
        let unknown = await timed("100-certificate chain, unknown root") { await PathValidator(anchors: Lab.anchors, policy: policy).evaluate(trust) }
        #expect(!unknown.isTrusted)
        #expect(unknown.codes.contains("no-path-to-trusted-anchor") || unknown.codes.contains("path-too-costly"), "\(unknown.codes)")
    }

    @Test func longChainThroughTheSession() async throws {
        let chain = HostileLab.longChain
        let server = try await LabServer.start(name: "long-chain", host: chain.host, chain: chain.presentedChain, privateKey: chain.leaf.privateKey)
        let good = try await LabServer.start("good", pki: Lab.pki)
        let session = try session(hosts: [chain.host])
        let failure = await timedFailure { try await session.data(for: TrustHTTPClientRequest(url: url(server))) }
        report("100-certificate chain, Web-PKI policy", failure)
        #expect(failure.error?.code == .serverCertificateUntrusted, "\(String(describing: failure.error))")
        #expect(failure.error?.trustDecision?.codes.contains("path-too-long") == true)
        #expect(failure.error?.trustDecision?.presentedChain.count == 100, "the client received the whole chain")
        await expectUsable(session, good)
        var policy = ValidationPolicy.webPKI
        policy.maximumIntermediates = 99
        let lenient = try self.session(DefaultTrustEvaluator(anchors: Self.anchors, policy: policy), hosts: [chain.host])
        let response = try await timed("100-certificate chain through the Session, accepted") {
            try await lenient.data(for: TrustHTTPClientRequest(url: url(server)))
        }
        #expect(response.statusCode == 200)
        #expect(response.serverTrust?.validatedPath.count == 101)
        await lenient.shutdown()
        await session.shutdown()
        try await good.shutdown()
        try await server.shutdown()
    }

    // MARK: - 10,000-name leaf

    @Test func manyNamesInTheEngine() async throws {
        for leaf in [HostileLab.manyNames, HostileLab.manyLongNames] {
            let suffix = leaf.names[0].split(separator: ".", maxSplits: 1)[1]
            print("[hostile] 10,000-name leaf (*.\(suffix)): \(leaf.certificateSize) bytes")
            let validator = PathValidator(anchors: .only([leaf.root.certificate]))
            let last = try ServerTrust(presentedChain: leaf.presentedChain, host: leaf.names[9_999])
            let matched = await timed("10,000 names, the last one matches (*.\(suffix))") { await validator.evaluate(last) }
            #expect(matched.isTrusted, "\(matched.codes)")
            let absent = try ServerTrust(presentedChain: leaf.presentedChain, host: "absent.\(suffix)")
            let mismatch = await timed("10,000 names, none matches (*.\(suffix))") { await validator.evaluate(absent) }
            #expect(!mismatch.isTrusted)
            #expect(mismatch.codes == ["name-mismatch"], "\(mismatch.codes)")
            // The explanation names the problem without listing ten thousand names.
            let text = mismatch.reasons.map(\.description).joined(separator: "; ")
            #expect(text.utf8.count < 4_096, "the reason is \(text.utf8.count) bytes")
        }
    }

    @Test func manyNamesThroughTheSession() async throws {
        let leaf = HostileLab.manyNames
        let host = leaf.names[9_999]
        let server = try await LabServer.start(name: "many-names", host: host, chain: leaf.presentedChain, privateKey: leaf.identity.privateKey)
        let good = try await LabServer.start("good", pki: Lab.pki)
        let session = try session(hosts: [host, "absent.s"])
        let response = try await timed("10,000-name leaf through the Session, last name") {
            try await session.data(for: TrustHTTPClientRequest(url: url(server)))
        }
        #expect(response.statusCode == 200)
        let failure = await timedFailure { try await session.data(for: TrustHTTPClientRequest(url: URL(string: "https://absent.s:\(server.port)/")!)) }
        report("10,000-name leaf, name absent", failure)
        #expect(failure.error?.code == .serverCertificateUntrusted, "\(String(describing: failure.error))")
        #expect(failure.error?.trustDecision?.codes == ["name-mismatch"])
        await expectUsable(session, good)
        await session.shutdown()
        try await good.shutdown()
        try await server.shutdown()
    }

    /// Past BoringSSL's size limit the TLS stack refuses the chain before the trust callback runs:
    /// a typed `secureConnectionFailed`, with no trust decision.
    @Test func oversizedLeafIsRefusedByTheTLSStack() async throws {
        let leaf = HostileLab.manyLongNames
        #expect(leaf.certificateSize > 102_400)
        let host = leaf.names[9_999]
        let server = try await LabServer.start(name: "many-long-names", host: host, chain: leaf.presentedChain, privateKey: leaf.identity.privateKey)
        let good = try await LabServer.start("good", pki: Lab.pki)
        let session = try session(hosts: [host])
        let failure = await timedFailure { try await session.data(for: TrustHTTPClientRequest(url: url(server))) }
        report("10,000-name leaf of \(leaf.certificateSize) bytes", failure)
        #expect(failure.error?.code == .secureConnectionFailed, "\(String(describing: failure.error))")
        #expect(failure.error?.trustDecision == nil)
        #expect(failure.error?.underlying?.contains("EXCESSIVE_MESSAGE_SIZE") == true, "\(String(describing: failure.error))")
        await expectUsable(session, good)
        await session.shutdown()
        try await good.shutdown()
        try await server.shutdown()
    }

    // MARK: - A cycle

    @Test func cycleInTheEngine() async throws {
        let cycle = HostileLab.cycle
        let trust = try ServerTrust(presentedChain: cycle.presentedChain, host: cycle.host)
        // No anchor in the cycle: the search ends, with no path.
        let unknown = await timed("cycle, no anchor") { await PathValidator(anchors: Lab.anchors).evaluate(trust) }
        #expect(!unknown.isTrusted)
        #expect(unknown.codes.contains("no-path-to-trusted-anchor"), "\(unknown.codes)")
        let none = await timed("cycle, empty anchors") { await PathValidator(anchors: .only([])).evaluate(trust) }
        #expect(!none.isTrusted)
        // A anchors the cycle: leaf ← B (by A) ← A.
        let viaA = await timed("cycle, A as the anchor") { await PathValidator(anchors: .only([cycle.rootA.certificate])).evaluate(trust) }
        #expect(viaA.isTrusted, "\(viaA.codes)")
        #expect(viaA.validatedPath == [cycle.leaf.certificate, cycle.bByA, cycle.rootA.certificate])
        // B anchors it directly: leaf ← B.
        let viaB = await timed("cycle, B as the anchor") { await PathValidator(anchors: .only([cycle.rootB.certificate])).evaluate(trust) }
        #expect(viaB.isTrusted, "\(viaB.codes)")
        #expect(viaB.validatedPath == [cycle.leaf.certificate, cycle.rootB.certificate])
        // A cross-certificate as the anchor (A's name and key, issued by B): leaf ← B (by A) ← A (by B).
        let crossAnchored = await timed("cycle, A-by-B as the anchor") { await PathValidator(anchors: .only([cycle.aByB])).evaluate(trust) }
        #expect(crossAnchored.isTrusted, "\(crossAnchored.codes)")
        #expect(crossAnchored.validatedPath == [cycle.leaf.certificate, cycle.bByA, cycle.aByB])
    }

    @Test func cycleThroughTheSession() async throws {
        let cycle = HostileLab.cycle
        let server = try await LabServer.start(name: "cycle", host: cycle.host, chain: cycle.presentedChain, privateKey: cycle.leaf.privateKey)
        let good = try await LabServer.start("good", pki: Lab.pki)
        let session = try session(hosts: [cycle.host])
        let failure = await timedFailure { try await session.data(for: TrustHTTPClientRequest(url: url(server))) }
        report("cycle, no anchor", failure)
        #expect(failure.error?.code == .serverCertificateHasUnknownRoot, "\(String(describing: failure.error))")
        await expectUsable(session, good)
        let anchored = try self.session(DefaultTrustEvaluator(anchors: .only(Lab.pki.trustedRoots + [cycle.rootA.certificate])), hosts: [cycle.host])
        let response = try await anchored.data(for: TrustHTTPClientRequest(url: url(server)))
        #expect(response.statusCode == 200)
        #expect(response.serverTrust?.validatedPath.count == 3)
        await expectUsable(anchored, good)
        await anchored.shutdown()
        await session.shutdown()
        try await good.shutdown()
        try await server.shutdown()
    }
}

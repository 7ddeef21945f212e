import ClientRecipes
import Foundation
import NIOCore
import Testing
import Trust
import TrustHTTP
import TrustLab
import TrustLabPKI
import TrustNIO

/// The lab as a user's test kit: a PKI of one's own, CRL and OCSP servers with the answers a test needs, servers
/// that fail or misbehave, client-CA changes — each checked against what a client must do about it.
@Suite struct LabKitTests {
    static let pki = RecipesLab.pki

    @Test("a PKI of the test's own: keys, a root, a self-signed development leaf, identities, a refused IP text")
    func ownPKI() throws {
        let key = try LabKeyType.p256.generate()
        let root = try LabAuthority.root(commonName: "test root")
        let development = try LabAuthority.selfSignedLeaf(dnsNames: ["dev.local"])
        let identity = LabIdentity(certificate: development.certificate, privateKey: key, keyType: .p256, intermediates: [root.certificate])
        #expect(identity.intermediates == [root.certificate] && identity.keyType == .p256)
        #expect(development.certificate.issuer == development.certificate.subject)
        let error = #expect(throws: LabError.self) { try LabAuthority.selfSignedLeaf(ipAddresses: ["not-an-ip"]) }
        #expect(error?.description.contains("not-an-ip") == true)
        #expect(LabPKI.clientNames.allSatisfy { Self.pki.clients[$0] != nil })
        #expect(LabHTTPAuthentication.users["alice"] == "wonderland")
    }

    @Test("a CRL served over HTTP refuses the revoked leaf and is fetched once")
    func crlServer() async throws {
        let crls = try await LabCRLServer.start()
        let leaf = try Self.pki.intermediate.leaf(dnsNames: ["crl.lab.test"], crlDistributionPoints: [crls.url("intermediate.crl")])
        let revoked = LabCRL.Revoked(leaf.certificate, reason: .keyCompromise)
        crls.publish(bytes: try LabCRL(issuer: Self.pki.intermediate, revoked: [revoked]).crl.derBytes, as: "intermediate.crl")
        var policy = ValidationPolicy.webPKI
        policy.revocation = RevocationPolicy(mode: .hard, depth: .leaf)
        let evaluator = try RevocationCheckingEvaluator(anchors: .only(Self.pki.trustedRoots), policy: policy, usesOCSP: false)
        let trust = try ServerTrust(presentedChain: leaf.chain, host: "crl.lab.test")
        let first = await evaluator.evaluate(trust)
        let second = await evaluator.evaluate(trust)
        await evaluator.shutdown()
        await crls.shutdown()
        #expect(first.reasons.map(\.code) == ["revoked"] && second.reasons.map(\.code) == ["revoked"])
        #expect(crls.requestCount("intermediate.crl") == 1 && crls.notModifiedCount("intermediate.crl") == 0 && crls.port > 0)
        #expect(
            revoked.serialNumber == Array(leaf.certificate.serialNumber.bytes.drop { $0 == 0 })
                || revoked.serialNumber == Array(leaf.certificate.serialNumber.bytes))
        #expect(revoked.reason == .keyCompromise && revoked.date < Date())
    }

    @Test("a slow responder under soft checking, and one that says try later under hard")
    func ocspResponderAnswers() async throws {
        let responder = try await LabOCSPResponder.start(authorities: [Self.pki.intermediate, Self.pki.root])
        let leaf = try Self.pki.intermediate.leaf(dnsNames: ["ocsp.lab.test"], ocspResponders: [responder.url])
        let trust = try ServerTrust(presentedChain: leaf.chain, host: "ocsp.lab.test")
        responder.update { $0.delay = .seconds(5) }
        let soft = try RevocationChecking.evaluator(anchors: .only(Self.pki.trustedRoots), hard: false, budget: .milliseconds(300))
        let slow = await soft.evaluate(trust)
        await soft.shutdown()
        responder.update {
            $0.delay = .zero
            $0.status = .tryLater
        }
        let hard = try RevocationChecking.evaluator(anchors: .only(Self.pki.trustedRoots), hard: true)
        let later = await hard.evaluate(trust)
        await hard.shutdown()
        await responder.shutdown()
        #expect(slow.isTrusted && slow.allowedFailures.map(\.code) == ["revocation-status-unknown"])
        #expect(later.reasons.map(\.code) == ["revocation-status-unknown"])
        #expect(responder.received.contains { $0.method == "POST" || $0.method == "GET" } && responder.port > 0)
    }

    @Test("servers that fail or misbehave: a plain server cut mid-body, a head too large")
    func faultyServers() async throws {
        let cut = try await LabFaultServer.startPlain(.closeMidBody)
        #expect(cut.fault == .closeMidBody && cut.scheme == "http" && cut.host == "plain.lab.test" && cut.port > 0)
        let hostileIdentity = try #require(Self.pki.servers["good"])
        let hostile = try await LabHostileServer.start(.hugeHead, host: "good.lab.test", chain: hostileIdentity.chain, privateKey: hostileIdentity.privateKey)
        let client = try TrustHTTPClient(configuration: RecipesLab.configuration())
        let cutOutcome = await Result { try await client.data(for: TrustHTTPClientRequest(url: #require(URL(string: cut.baseURL + "/")))) }
        let hostileOutcome = await Result { try await client.data(for: TrustHTTPClientRequest(url: hostile.url(path: "/"))) }
        await client.shutdown()
        try await cut.shutdown()
        let connections = hostile.connectionCount
        await hostile.shutdown()
        guard case .failure(let cutError as TrustHTTPClientError) = cutOutcome, case .failure(let hostileError as TrustHTTPClientError) = hostileOutcome else {
            Issue.record("a faulty server's answer was taken: \(cutOutcome), \(hostileOutcome)")
            return
        }
        #expect(UpstreamFailure(cutError).kind == .unreachable(truncated: true))
        #expect(UpstreamFailure(hostileError).kind == .tooLarge(observed: hostileError.limit?.observed ?? -1, limit: 300 << 10, fromProxy: false))
        #expect(connections == 1 && hostile.scheme == "https" && hostile.openConnectionCount == 0)
    }

    @Test("a server whose client CAs change: the clients of the old CA are refused on new connections")
    func clientCAChange() async throws {
        let mode = LabServer.MutualTLSMode.required
        #expect(mode.host == "mtls-required.good.lab.test" && mode.clientAuthentication(pki: Self.pki).requirement == .required)
        let server = try await LabServer.start(mutualTLS: mode, pki: Self.pki)
        let service = LabServerService([server])
        #expect(service.servers.count == 1 && server.isListening && server.scheme == "https")
        func whoami(_ name: String) async throws -> Result<String, any Error> {
            let identity = try #require(Self.pki.clients[name])
            let presented = try ClientIdentity(certificateChainPEM: identity.chainPEM, privateKeyPEM: identity.privateKeyPEM)
            let client = try TrustHTTPClient(configuration: RecipesLab.configuration { $0.defaultClientIdentity = presented })
            let result = await Result { try await client.data(for: TrustHTTPClientRequest(url: RecipesLab.url(server, "/whoami"))).text }
            await client.shutdown()
            return result
        }
        let before = try await whoami("client")
        try server.replaceClientCAs([Self.pki.clientCA.certificate])
        let oldCA = try await whoami("client")
        let newCA = try await whoami("partner")
        try await server.shutdown()
        #expect(try before.get().hasPrefix("client: CN=lab client"))
        guard case .failure(let refused as TrustHTTPClientError) = oldCA else {
            Issue.record("a client of the removed CA was accepted: \(oldCA)")
            return
        }
        #expect(refused.code == .clientCertificateRejected)
        #expect(try newCA.get().hasPrefix("client: CN=lab partner"))
    }

    @Test("a log list of the test's own: an operator short of the policy's two")
    func ctLogs() async throws {
        let alpha = LabCTLog(description: "test Alpha", operatorName: "Alpha")
        let alphaToo = LabCTLog(description: "test Alpha 2", operatorName: "Alpha", state: .usable, stateTimestamp: Date() - 86_400, temporalInterval: nil)
        #expect(alpha.description == "test Alpha" && alphaToo.operatorName == "Alpha" && alphaToo.state == .usable && alphaToo.temporalInterval == nil)
        #expect(alphaToo.stateTimestamp < Date())
        var policy = ValidationPolicy.webPKI
        policy.certificateTransparency = CertificateTransparencyPolicy(
            mode: .enforce, logList: try CTLogList(json: LabCTLog.logList([alpha, alphaToo])), appliesToCustomAnchors: true)
        let leaf = try Self.pki.intermediate.leaf(dnsNames: ["ct.lab.test"], scts: [.good(alpha), .good(alphaToo)])
        let decision = await PathValidator(anchors: .only(Self.pki.trustedRoots), policy: policy).evaluate(
            try ServerTrust(presentedChain: leaf.chain, host: "ct.lab.test"))
        #expect(decision.reasons.map(\.code) == ["ct-policy-not-met"])
    }
}

import ClientRecipes
import Foundation
import Testing
import Trust
import TrustHTTP
import TrustLab
import TrustLabPKI

@Suite struct RevocationCheckingTests {
    /// A server for `ocsp.lab.test` whose leaf names `responder`.
    static func server(_ responder: LabOCSPResponder) async throws -> (LabServer, LabIdentity) {
        let leaf = try RecipesLab.pki.intermediate.leaf(dnsNames: ["ocsp.lab.test"], ocspResponders: [responder.url])
        let server = try await LabServer.start(name: "ocsp", host: "ocsp.lab.test", chain: leaf.chain, privateKey: leaf.privateKey)
        return (server, leaf)
    }

    static func get(_ server: LabServer, hard: Bool) async throws -> Result<TrustHTTPClientResponse, any Error> {
        let evaluator = try RevocationChecking.evaluator(anchors: .only(RecipesLab.pki.trustedRoots), hard: hard)
        let client = try TrustHTTPClient(
            configuration: RecipesLab.configuration {
                $0.serverTrust = evaluator
                $0.resolve["ocsp.lab.test"] = "127.0.0.1"
                $0.evaluationCache = nil
            })
        let result = await Result { try await client.data(for: TrustHTTPClientRequest(url: RecipesLab.url(server, "/"))) }
        await client.shutdown()
        await evaluator.shutdown()
        return result
    }

    @Test("a good answer lets the request through; a revoked certificate is refused as revoked; a dead responder is unavailable under hard checking")
    func revocation() async throws {
        let responder = try await LabOCSPResponder.start(authorities: [RecipesLab.pki.intermediate, RecipesLab.pki.root])
        let (server, leaf) = try await Self.server(responder)
        let good = await Result { try await Self.get(server, hard: true).get() }
        responder.set(.revoked(at: Date(timeIntervalSinceNow: -600), reason: .keyCompromise), for: leaf.certificate)
        let revoked = await Result { try await Self.get(server, hard: true).get() }
        responder.update { $0.httpStatus = 500 }
        let unavailableHard = await Result { try await Self.get(server, hard: true).get() }
        let unavailableSoft = await Result { try await Self.get(server, hard: false).get() }
        try await server.shutdown()
        await responder.shutdown()

        #expect(try good.get().status == .ok)
        #expect(responder.received.first?.request?.nonce != nil, "nonces are on")
        guard case .failure(let refusal as TrustHTTPClientError) = revoked else {
            Issue.record("a revoked certificate was accepted: \(revoked)")
            return
        }
        #expect(UpstreamFailure(refusal).kind == .refusedCertificate(["revoked"]))
        guard case .failure(let unavailable as TrustHTTPClientError) = unavailableHard else {
            Issue.record("an unchecked certificate was accepted under hard checking: \(unavailableHard)")
            return
        }
        #expect(UpstreamFailure(unavailable).kind == .revocationUnavailable && UpstreamFailure(unavailable).isRetryable)
        let soft = try unavailableSoft.get()
        #expect(soft.status == .ok)
        #expect(soft.serverTrust?.allowedFailures.map(\.code) == ["revocation-status-unknown"])
    }

    @Test("what is checked, and the fetcher's limits, in one line each")
    func descriptions() throws {
        let evaluator = try RevocationChecking.evaluator(anchors: .system, hard: true, wholeChain: true)
        #expect(RevocationChecking.describe(evaluator) == "revocation hard, chain; short-lived exemption 7 days")
        #expect(RevocationChecking.describe(try RevocationChecking.fetcher()).hasSuffix("nonces on, CertID SHA-256"))
    }
}

import ClientRecipes
import Foundation
import Testing
import Trust
import TrustHTTP
import TrustLab
import TrustLabPKI

@Suite struct PinningStrategyTests {
    @Test("a renewed leaf and a move to the backup CA: key pins hold, the leaf-certificate pin breaks")
    func rotation() async throws {
        let pki = RecipesLab.pki
        // The next issuing CA exists before it is used: its key is the backup pin the app ships with.
        let nextCA = try pki.root.intermediate(commonName: "lab next issuing CA")
        let host = LabPKI.hostName(for: "good")
        let first = try pki.intermediate.leaf(dnsNames: [host])
        let server = try await LabServer.start(name: "rotating", host: host, chain: first.chain, privateKey: first.privateKey)

        let cache = TrustEvaluationCache(capacity: 16, timeToLive: .seconds(60))
        let keys = PinningStrategy.cached(
            try PinningStrategy.issuerKeys(current: pki.intermediate.certificate, backup: nextCA.certificate.spkiPin, anchors: .only(pki.trustedRoots)),
            in: cache)
        let leafPin = try PinningStrategy.leafCertificate(first.certificate)
        #expect(PinningStrategy.describe(keys).hasPrefix("cached in 16 decisions for 60.0 seconds, over PublicKeysTrustEvaluator"))

        func status(_ evaluator: any TrustEvaluator) async throws -> String {
            let client = try TrustHTTPClient(configuration: RecipesLab.configuration { $0.serverTrust = evaluator })
            #expect(client.configuration.resolve[host] == "127.0.0.1")
            let result = await Result { try await client.data(for: TrustHTTPClientRequest(url: RecipesLab.url(server, "/"))) }
            await client.shutdown()
            switch result {
            case .success(let response): return "\(response.statusCode)"
            case .failure(let error as TrustHTTPClientError): return error.trustDecision?.reasons.first?.code ?? "\(error.code)"
            case .failure(let error): return "\(error)"
            }
        }
        let before = (try await status(keys), try await status(leafPin))
        // The leaf is renewed under the same CA: a new key and certificate.
        let renewed = try pki.intermediate.leaf(dnsNames: [host])
        try server.replaceIdentity(chain: renewed.chain, privateKey: renewed.privateKey)
        let afterRenewal = (try await status(keys), try await status(leafPin))
        // The server moves to the next CA.
        let moved = try nextCA.leaf(dnsNames: [host])
        try server.replaceIdentity(chain: moved.chain, privateKey: moved.privateKey)
        let afterMove = (try await status(keys), try await status(leafPin))
        let connections = server.acceptedConnectionCount
        try await server.shutdown()

        #expect(before == ("200", "200"))
        #expect(afterRenewal.0 == "200" && afterRenewal.1 != "200", "\(afterRenewal)")
        #expect(afterMove.0 == "200" && afterMove.1 != "200", "\(afterMove)")
        #expect(connections == 6)
        // Three chains, three decisions cached: none reused for another chain.
        let statistics = cache.statistics
        #expect(statistics.entries == 3 && statistics.hits == 0 && statistics.misses >= 3, "\(statistics)")
        cache.removeAll()
        #expect(cache.statistics.entries == 0)
        #expect(
            PinningStrategy.describe(
                try PinningStrategy.issuerKeys(current: pki.intermediate.certificate, backup: nextCA.certificate.spkiPin, anchors: .system)
            ).hasPrefix("2 key pins"))
        #expect(PinningStrategy.describe(leafPin).hasPrefix("1 pinned certificates"))
    }
}

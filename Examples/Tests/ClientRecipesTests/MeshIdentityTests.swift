import ClientRecipes
import Foundation
import Testing
import Trust
import TrustHTTP
import TrustLab
import TrustLabPKI
import TrustNIO

@Suite struct MeshIdentityTests {
    struct Workloads: Sendable {
        let root: LabAuthority
        let api: LabIdentity
        let web: LabIdentity
        let batch: LabIdentity
        let dev: LabIdentity
    }

    static let workloads: Workloads = {
        do {
            let root = try LabAuthority.spiffeRoot(trustDomain: "example.org")
            let signing = try root.spiffeSigningCertificate(commonName: "example.org workload CA", uris: ["spiffe://example.org"])
            return Workloads(
                root: root, api: try signing.svid("spiffe://example.org/ns/prod/sa/api"), web: try signing.svid("spiffe://example.org/ns/prod/sa/web"),
                batch: try signing.svid("spiffe://example.org/ns/batch/sa/report"), dev: try signing.svid("spiffe://example.org/ns/dev/sa/web"))
        } catch {
            fatalError("cannot make the SPIFFE workloads: \(error)")
        }
    }()

    @Test("a peer at 127.0.0.1 trusted by its SPIFFE ID; callers authorised by theirs; a stranger's SVID refused")
    func mesh() async throws {
        let w = Self.workloads
        let mesh = try MeshIdentity(trustDomain: "example.org", anchors: [w.root.certificate])
        let callers = try mesh.callers(["spiffe://example.org/ns/prod/*", "spiffe://example.org/ns/batch/*"])
        #expect(MeshIdentity.describe(callers).contains("callers: spiffe://example.org/ns/prod/*, spiffe://example.org/ns/batch/*"))
        let server = try await LabServer.start(
            name: "api", host: "127.0.0.1", chain: w.api.chain, privateKey: w.api.privateKey, clientAuthentication: callers)
        let evaluator = try mesh.peers(["spiffe://example.org/ns/prod/sa/api"])
        #expect(MeshIdentity.describe(evaluator).contains("allowed: spiffe://example.org/ns/prod/sa/api in spiffe://example.org"))

        func whoami(as caller: LabIdentity) async throws -> Result<String, any Error> {
            var configuration = TrustHTTPClientConfiguration()
            configuration.serverTrust = evaluator
            configuration.defaultClientIdentity = try ClientIdentity(certificateChainPEM: caller.chainPEM, privateKeyPEM: caller.privateKeyPEM)
            let client = try TrustHTTPClient(configuration: configuration)
            let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/whoami"))
            let result = await Result { try await client.data(for: TrustHTTPClientRequest(url: url)).text }
            await client.shutdown()
            return result
        }
        let web = try await whoami(as: w.web)
        let dev = try await whoami(as: w.dev)
        try await server.shutdown()

        #expect(try web.get().hasPrefix("client: "), "\(web)")
        guard case .failure(let refused as TrustHTTPClientError) = dev else {
            Issue.record("a caller outside the allowed prefixes was accepted: \(dev)")
            return
        }
        #expect(refused.code == .clientCertificateRejected, "\(refused)")

        #expect(try mesh.role(of: #require(VerifiedClient(validatedPath: w.web.chain + [w.root.certificate]))) == .frontend)
        #expect(try mesh.role(of: #require(VerifiedClient(validatedPath: w.batch.chain + [w.root.certificate]))) == .batch)
        #expect(try mesh.role(of: #require(VerifiedClient(validatedPath: w.dev.chain + [w.root.certificate]))) == .none)
        #expect(try mesh.id("spiffe://example.org/ns/prod/sa/web").get().path == "/ns/prod/sa/web")
        guard case .failure(let problem) = mesh.id("spiffe://example.org/ns/%41/x") else {
            Issue.record("a percent-encoded ID was accepted")
            return
        }
        #expect(!problem.code.isEmpty)
    }
}

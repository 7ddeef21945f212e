import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustNIO
import TrustTestSupport
import X509

/// Workloads that know each other only by SPIFFE ID: a lab server at 127.0.0.1 presenting an X.509-SVID (no DNS
/// name), verifying client SVIDs by ID, and a TrustHTTPClient trusting it by its ID through a ``SPIFFETrustEvaluator``.
@Suite("SPIFFE: mutual TLS over loopback between workloads identified only by SPIFFE IDs", .serialized, .timeLimit(.minutes(5)), .paced)
struct SPIFFEMutualTLSTests {
    struct Workloads: Sendable {
        let bundles: SPIFFETrustBundles
        let server: LabIdentity
        let client: LabIdentity
        let stranger: LabIdentity
    }

    static let serverID = "spiffe://example.org/ns/prod/sa/api"
    static let clientID = "spiffe://example.org/ns/prod/sa/web"

    static let workloads: Workloads = {
        do {
            let root = try LabAuthority.spiffeRoot(trustDomain: "example.org")
            let signing = try root.spiffeSigningCertificate(commonName: "example.org workload CA", uris: ["spiffe://example.org"])
            let bundles = SPIFFETrustBundles([SPIFFEBundle(trustDomain: try SPIFFETrustDomain(parsing: "example.org"), anchors: [root.certificate])])
            return Workloads(
                bundles: bundles, server: try signing.svid(serverID), client: try signing.svid(clientID),
                stranger: try signing.svid("spiffe://example.org/ns/dev/sa/web"))
        } catch {
            fatalError("cannot make the SPIFFE workloads: \(error)")
        }
    }()

    /// A server at 127.0.0.1 presenting the server SVID, requiring a client SVID under `/ns/prod`.
    func server() async throws -> LabServer {
        let w = Self.workloads
        return try await LabServer.start(
            name: "spiffe", host: "127.0.0.1", chain: w.server.chain, privateKey: w.server.privateKey,
            clientAuthentication: try ClientAuthentication(
                spiffeBundles: w.bundles, allowedSPIFFEIDs: [try SPIFFEIDMatcher(parsing: "spiffe://example.org/ns/prod/*")]))
    }

    /// GET /whoami from a session that trusts the server as `allowedServer` and presents `client`.
    func whoami(_ server: LabServer, allowedServer: String, client: LabIdentity) async throws -> Result<String, TrustHTTPClientError> {
        let evaluator = try SPIFFETrustEvaluator(bundles: Self.workloads.bundles, allowedIDs: [try SPIFFEIDMatcher(parsing: allowedServer)])
        let identity = try ClientIdentity(certificateChainPEM: client.chainPEM, privateKeyPEM: client.privateKeyPEM)
        let session = try labSession(evaluator) { $0.defaultClientIdentity = identity }
        return try await withTeardown({ await session.shutdown() }) {
            do {
                return .success(try await session.data(for: TrustHTTPClientRequest(url: url(server, "/whoami"))).text)
            } catch let error as TrustHTTPClientError {
                return .failure(error)
            } catch {
                return .failure(TrustHTTPClientError(.badServerResponse, "\(error)"))
            }
        }
    }

    @Test func bothSidesVerifyEachOthersSPIFFEID() async throws {
        let server = try await server()
        try await withTeardown({ try? await server.shutdown() }) {
            #expect(server.baseURL.hasPrefix("https://127.0.0.1:"))
            let result = try await whoami(server, allowedServer: Self.serverID, client: Self.workloads.client)
            let text = try result.get()
            // The server's handler read the client back (its record and NIOSSL's validated chain agree): the SVID's subject.
            #expect(text.contains("client: ") && text.contains(Self.clientID), "\(text)")
            #expect(text.contains("validated chain: 3 certificates"), "\(text)")
        }
    }

    @Test func theSessionRefusesAServerWhoseIDIsNotAllowed() async throws {
        let server = try await server()
        try await withTeardown({ try? await server.shutdown() }) {
            let result = try await whoami(server, allowedServer: "spiffe://example.org/ns/prod/sa/billing", client: Self.workloads.client)
            guard case .failure(let error) = result else {
                Issue.record("a server with another SPIFFE ID was trusted")
                return
            }
            let reasons = error.trustDecision?.reasons ?? []
            #expect(
                reasons == [.spiffeIDNotAllowed(spiffeID: Self.serverID, allowed: ["spiffe://example.org/ns/prod/sa/billing"])], "\(error): \(reasons)")
        }
    }

    @Test func theServerRefusesAClientOutsideItsPathPrefix() async throws {
        let server = try await server()
        try await withTeardown({ try? await server.shutdown() }) {
            let result = try await whoami(server, allowedServer: Self.serverID, client: Self.workloads.stranger)
            guard case .failure(let error) = result else {
                Issue.record("a client outside /ns/prod was accepted")
                return
            }
            #expect(error.code == .clientCertificateRejected, "\(error)")
        }
    }

    /// The server side's verdict, without TLS: the verified client names its SPIFFE ID.
    @Test func verifiedClientNamesItsSPIFFEID() async throws {
        let w = Self.workloads
        let authentication = try ClientAuthentication(spiffeBundles: w.bundles, allowedSPIFFEIDs: [try SPIFFEIDMatcher(parsing: Self.clientID)])
        let decision = await authentication.validator.evaluate(ServerTrust(presentedChain: w.client.chain, peerName: nil))
        #expect(decision.isTrusted, "\(decision.reasons)")
        let client = try #require(VerifiedClient(validatedPath: decision.validatedPath))
        let expected = try SPIFFEID(parsing: Self.clientID)
        #expect(client.spiffeID == expected)
        let refused = await authentication.validator.evaluate(ServerTrust(presentedChain: w.stranger.chain, peerName: nil))
        #expect(refused.codes == ["spiffe-id-not-allowed"], "\(refused.reasons)")
        // A certificate without a URI SAN has no SPIFFE ID.
        #expect(VerifiedClient(validatedPath: [Lab.pki.servers["good"]!.certificate])?.spiffeID == nil)
        #expect(throws: SPIFFEConfigurationError.noAllowedIDs) { try ClientAuthentication(spiffeBundles: w.bundles, allowedSPIFFEIDs: []) }
    }
}

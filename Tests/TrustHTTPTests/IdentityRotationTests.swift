import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustNIO
import TrustTestSupport

@Suite("Identity rotation: a session's client identity and a lab server's certificates replaced without a restart", .timeLimit(.minutes(5)), .paced)
struct IdentityRotationTests {
    /// The lab's mutual-TLS server (a client certificate under the lab root required) and a session to it presenting
    /// the reloading identity of `folder`, set up as the first identity `first`.
    func withRotation<T>(
        protocols: LabServer.Protocols = .http2AndHTTP1, first: String = "rotation A",
        _ body: (LabServer, TrustHTTPClient, ReloadingClientIdentity, IdentityFolder) async throws -> T
    ) async throws -> T {
        let folder = try IdentityFolder()
        try folder.writePEM(try Lab.rotatingClient(first))
        let identity = try ReloadingClientIdentity(.pem(certificateChain: folder.chain, key: folder.key))
        let server = try await LabServer.start(mutualTLS: .required, pki: Lab.pki, protocols: protocols)
        let session = try labSession { $0.defaultReloadingClientIdentity = identity }
        return try await withTeardown({
            await session.shutdown()
            try? await server.shutdown()
        }) {
            try await body(server, session, identity, folder)
        }
    }

    func whoami(_ session: TrustHTTPClient, _ server: LabServer) async throws -> String {
        try await session.data(for: TrustHTTPClientRequest(url: url(server, "/whoami"))).text
    }

    @Test(arguments: [LabServer.Protocols.http1Only, .http2Only])
    func whoamiShowsTheNewIdentityWithoutANewSession(_ protocols: LabServer.Protocols) async throws {
        try await withRotation(protocols: protocols) { server, session, identity, folder in
            #expect(try await whoami(session, server).contains("CN=rotation A"))
            #expect(try await whoami(session, server).contains("CN=rotation A"))
            #expect(server.acceptedConnectionCount == 1)
            try folder.writePEM(try Lab.rotatingClient("rotation B"))
            #expect(identity.reload() == .reloaded(generation: 2))
            // The pooled connection authenticated as A is given to no new request: a new one presents B.
            #expect(try await whoami(session, server).contains("CN=rotation B"))
            #expect(try await whoami(session, server).contains("CN=rotation B"))
            #expect(server.acceptedConnectionCount == 2)
        }
    }

    @Test func aBadReplacementKeepsTheIdentityInForceForNewConnections() async throws {
        try await withRotation(protocols: .http1Only) { server, session, identity, folder in
            #expect(try await whoami(session, server).contains("CN=rotation A"))
            let expired = try Lab.rotatingClient(
                "rotation B", notBefore: Date(timeIntervalSinceNow: -3 * 86_400), notAfter: Date(timeIntervalSinceNow: -86_400))
            try folder.writePEM(expired)
            #expect(identity.reload() == .rejected(.expired(path: folder.chain, notValidAfter: expired.certificate.notValidAfter)))
            // The pooled connection ends (`/close`): the next request's new connection still presents A.
            _ = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/close")))
            #expect(try await whoami(session, server).contains("CN=rotation A"))
            #expect(server.acceptedConnectionCount == 2)
        }
    }

    @Test func anOpenConnectionKeepsItsIdentityWhileANewOnePresentsTheNewOne() async throws {
        try await withRotation(protocols: .http1Only) { server, session, identity, folder in
            #expect(try await whoami(session, server).contains("CN=rotation A"))
            // The same connection (authenticated as A) streams a large body, read a part at a time.
            let total = 4 << 20
            let streaming = try await session.bytes(for: TrustHTTPClientRequest(url: url(server, "/bytes/\(total)")))
            var iterator = streaming.body.makeAsyncIterator()
            var received = (try await iterator.next())?.readableBytes ?? 0
            #expect(server.acceptedConnectionCount == 1)
            try folder.writePEM(try Lab.rotatingClient("rotation B"))
            #expect(identity.reload() == .reloaded(generation: 2))
            #expect(try await whoami(session, server).contains("CN=rotation B"))
            #expect(server.acceptedConnectionCount == 2)
            // The connection authenticated as A was not closed by the rotation: its body arrives whole.
            while let chunk = try await iterator.next() { received += chunk.readableBytes }
            #expect(received == total)
            // Back in the pool under A's generation, it is not given to a request now: B's connection is.
            #expect(try await whoami(session, server).contains("CN=rotation B"))
            #expect(server.acceptedConnectionCount == 2)
        }
    }

    @Test func aReplacedServerCertificateIsPresentedOnNewConnections() async throws {
        let server = try await LabServer.start(mutualTLS: .required, pki: Lab.pki)
        let identity = try Lab.rotatingClient("rotation A")
        let fixed = try ClientIdentity(certificateChainPEM: identity.chainPEM, privateKeyPEM: identity.privateKeyPEM)
        let first = try labSession { $0.defaultClientIdentity = fixed }
        let second = try labSession { $0.defaultClientIdentity = fixed }
        try await withTeardown({
            await first.shutdown()
            await second.shutdown()
            try? await server.shutdown()
        }) {
            let before = try await first.data(for: TrustHTTPClientRequest(url: url(server, "/whoami")))
            #expect(before.serverTrust?.presentedChain.first == Lab.pki.servers["good"]?.certificate)
            let renewed = try Lab.pki.intermediate.leaf(dnsNames: [LabServer.MutualTLSMode.required.host])
            try server.replaceIdentity(chain: renewed.chain, privateKey: renewed.privateKey)
            // The open (pooled) connection keeps the certificate it was set up with…
            let pooled = try await first.data(for: TrustHTTPClientRequest(url: url(server, "/whoami")))
            #expect(pooled.serverTrust?.presentedChain.first == Lab.pki.servers["good"]?.certificate)
            // …a new connection is shown the new one.
            let after = try await second.data(for: TrustHTTPClientRequest(url: url(server, "/whoami")))
            #expect(after.statusCode == 200)
            #expect(after.serverTrust?.presentedChain.first == renewed.certificate)
            #expect(after.serverTrust?.isTrusted == true)
        }
    }

    @Test func replacedClientCAsDecideNewConnections() async throws {
        let server = try await LabServer.start(mutualTLS: .required, pki: Lab.pki, protocols: .http1Only)
        func session(_ name: String) throws -> TrustHTTPClient {
            guard let client = Lab.pki.clients[name] else { throw LabError.cannotWrite(name, "no such lab client") }
            let identity = try ClientIdentity(certificateChainPEM: client.chainPEM, privateKeyPEM: client.privateKeyPEM)
            return try labSession { $0.defaultClientIdentity = identity }
        }
        let (underRoot, partner, underRootAgain) = (try session("client"), try session("partner"), try session("client"))
        try await withTeardown({
            for session in [underRoot, partner, underRootAgain] { await session.shutdown() }
            try? await server.shutdown()
        }) {
            #expect(try await whoami(underRoot, server).contains("client: "))
            try server.replaceClientCAs([Lab.pki.clientCA.certificate])
            // Only the client CA's certificates now: the partner is accepted, the lab root's client refused.
            #expect(try await whoami(partner, server).contains("CN=lab partner"))
            let refused = await sessionError { try await underRootAgain.data(for: TrustHTTPClientRequest(url: url(server, "/whoami"))) }
            #expect(refused?.code == .clientCertificateRejected, "\(String(describing: refused))")
            // The connection accepted before keeps its verdict.
            #expect(try await whoami(underRoot, server).contains("client: "))
        }
    }
}

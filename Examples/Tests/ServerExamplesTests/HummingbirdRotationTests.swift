import Foundation
import Hummingbird
import HummingbirdMutualTLS
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle
import Testing
import TrustHTTP
import TrustLab
import TrustNIO
import Vapor
import VaporMutualTLS
import X509

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A private temporary folder (0700) for a server's PEM files, each written private (0600) from its first byte and
/// replaced by a rename, removed when the last reference goes.
private final class PEMFolder: Sendable {
    let path = NSTemporaryDirectory() + "swift-trust-hummingbird-rotation-" + UUID().uuidString

    init() throws {
        guard mkdir(path, 0o700) == 0 else { throw LabError.cannotWrite(path, "mkdir failed") }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    subscript(_ name: String) -> String { path + "/" + name }

    /// Writes `text` to `name` in the folder: a private file of its own first, renamed over the old one.
    func write(_ text: String, to name: String) throws {
        let temporary = self[name + ".new"]
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw LabError.cannotWrite(name, "open failed") }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try handle.write(contentsOf: Data(text.utf8))
        try handle.close()
        guard rename(temporary, self[name]) == 0 else { throw LabError.cannotWrite(name, "rename failed") }
    }

    /// Writes a server identity: its chain (leaf first) and its key.
    func writeServer(_ identity: LabIdentity) throws {
        try write(identity.chainPEM, to: "chain.pem")
        try write(identity.privateKeyPEM, to: "key.pem")
    }

    var files: ReloadingServerIdentity.Files {
        .init(certificateChain: self["chain.pem"], key: self["key.pem"], clientCAs: self["client-cas.pem"])
    }
}

/// A `GET /whoami` over a new TrustHTTPClient (a new connection), with the leaf of the server certificate it was given.
private func whoamiSeeingServer(port: Int, identity: ClientIdentity?) async -> (Result<String, TrustHTTPClientError>, Certificate?) {
    let leaf = NIOLockedValueBox<Certificate?>(nil)
    var configuration = TrustHTTPClientConfiguration()
    configuration.serverTrust = DefaultTrustEvaluator(anchors: .only(Lab.pki.trustedRoots))
    configuration.resolve = LabPKI.loopbackResolve
    configuration.requestTimeout = .seconds(20)
    configuration.defaultClientIdentity = identity
    configuration.decisionObserver = { event in leaf.withLockedValue { $0 = event.presentedChain.first } }
    do {
        let session = try TrustHTTPClient(configuration: configuration)
        let result: Result<String, TrustHTTPClientError>
        do {
            let url = try #require(URL(string: "https://good.lab.test:\(port)/whoami"))
            let response = try await session.data(for: TrustHTTPClientRequest(url: url))
            result = response.statusCode == 200 ? .success(response.text) : .failure(TrustHTTPClientError(.badServerResponse, "status \(response.statusCode)"))
        } catch let error as TrustHTTPClientError {
            result = .failure(error)
        }
        await session.shutdown()
        return (result, leaf.withLockedValue { $0 })
    } catch let error as TrustHTTPClientError {
        return (.failure(error), nil)
    } catch {
        return (.failure(TrustHTTPClientError(.badServerResponse, "\(error)")), nil)
    }
}

/// The Hummingbird example with `identity`, started on a free loopback port.
private func startHummingbird(identity: ReloadingServerIdentity) async throws -> RunningServer {
    try await RunningServer.hummingbird(label: "hummingbird-rotation") { onServerRunning in
        HummingbirdMutualTLSServer.application(identity: identity, onServerRunning: onServerRunning)
    }
}

@Suite("Hummingbird and Vapor example servers taking a new certificate and client CAs without a restart", .timeLimit(.minutes(5)))
struct HummingbirdRotationTests {
    @Test func newConnectionsTakeTheReloadedCertificateAndClientCAs() async throws {
        let pki = Lab.pki
        let good = try #require(pki.servers["good"])
        let folder = try PEMFolder()
        try folder.writeServer(good)
        try folder.write(pki.root.identity.certificatePEM, to: "client-cas.pem")
        let identity = try ReloadingServerIdentity(folder.files, clientAuthentication: ClientAuthentication(requirement: .required, anchors: []))
        let server = try await startHummingbird(identity: identity)

        let (before, leafBefore) = await whoamiSeeingServer(port: server.port, identity: try Lab.identity("client"))

        // A renewed server certificate for the same names, under the same issuer.
        let renewed = try pki.intermediate.leaf(dnsNames: ["good.lab.test", "*.good.lab.test"], ipAddresses: ["127.0.0.1"])
        try folder.writeServer(renewed)
        let certificateReload = identity.reload()
        let (afterRenewal, leafAfter) = await whoamiSeeingServer(port: server.port, identity: try Lab.identity("client"))

        // The client-CA bundle now holds the separate client CA only: the lab root's clients are refused.
        try folder.write(pki.clientCA.identity.certificatePEM, to: "client-cas.pem")
        let bundleReload = identity.reload()
        let summary = identity.summary
        let (oldClient, _) = await whoamiSeeingServer(port: server.port, identity: try Lab.identity("client"))
        let (newClient, _) = await whoamiSeeingServer(port: server.port, identity: try Lab.identity("partner"))
        await server.stop()

        #expect((try? before.get())?.hasPrefix("client: CN=lab client") == true, "\(before)")
        #expect(leafBefore == good.certificate)
        #expect(certificateReload == .reloaded(generation: 2))
        #expect((try? afterRenewal.get())?.hasPrefix("client: CN=lab client") == true, "\(afterRenewal)")
        #expect(leafAfter == renewed.certificate)
        #expect(leafAfter != good.certificate)
        #expect(bundleReload == .reloaded(generation: 3))
        #expect(summary.first?.hasSuffix("(generation 3); client certificates required") == true, "\(summary)")
        #expect(summary.last?.contains("client-cas.pem") == true, "\(summary)")
        guard case .failure(let error) = oldClient else {
            Issue.record("a client of the removed CA was accepted: \(oldClient)")
            return
        }
        #expect(error.code == .clientCertificateRejected, "\(error)")
        #expect((try? newClient.get())?.hasPrefix("client: CN=lab partner") == true, "\(newClient)")
    }

    /// Vapor 4 reads `app.http.server.configuration` for each connection it accepts and makes a `NIOSSLContext` from
    /// its `tlsConfiguration` then (`HTTPServer`'s child-channel initialiser): a configuration assigned while the
    /// server runs — same address — applies to new connections, without a restart (what MutualTLS.md says).
    @Test func vaporTakesATLSConfigurationAssignedWhileRunning() async throws {
        let pki = Lab.pki
        let good = try #require(pki.servers["good"])
        let app = try await Vapor.Application.make(.testing)
        VaporMutualTLSServer.configure(
            app, tlsConfiguration: try LabServer.serverConfiguration(chain: good.chain, privateKey: good.privateKey),
            clientAuthentication: ClientAuthentication(requirement: .required, anchors: [pki.root.certificate]))
        do {
            try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        guard let port = app.http.server.shared.localAddress?.port else {
            await app.server.shutdown()
            try? await app.asyncShutdown()
            throw LabError.cannotWrite("vapor", "no local port")
        }
        let (before, leafBefore) = await whoamiSeeingServer(port: port, identity: try Lab.identity("client"))

        let renewed = try pki.intermediate.leaf(dnsNames: ["good.lab.test", "*.good.lab.test"], ipAddresses: ["127.0.0.1"])
        let clients = ClientAuthentication(requirement: .required, anchors: [pki.clientCA.certificate])
        var tls = try LabServer.serverConfiguration(chain: renewed.chain, privateKey: renewed.privateKey)
        clients.apply(to: &tls)
        app.http.server.configuration.tlsConfiguration = tls
        app.http.server.configuration.customCertificateVerifyCallbackWithMetadata = clients.verificationCallback()
        let (oldClient, leafAfter) = await whoamiSeeingServer(port: port, identity: try Lab.identity("client"))
        let (newClient, _) = await whoamiSeeingServer(port: port, identity: try Lab.identity("partner"))
        await app.server.shutdown()
        try? await app.asyncShutdown()

        #expect((try? before.get())?.hasPrefix("client: CN=lab client") == true, "\(before)")
        #expect(leafBefore == good.certificate)
        #expect(leafAfter == renewed.certificate)
        guard case .failure(let error) = oldClient else {
            Issue.record("a client of the removed CA was accepted: \(oldClient)")
            return
        }
        #expect(error.code == .clientCertificateRejected, "\(error)")
        #expect((try? newClient.get())?.hasPrefix("client: CN=lab partner") == true, "\(newClient)")
    }
}

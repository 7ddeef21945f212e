import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustNIO
import TrustTestSupport
import X509

@Suite("ReloadingServerIdentity: a new context for new connections when the files change", .timeLimit(.minutes(5)), .paced)
struct ReloadingServerIdentityTests {
    static func server(_ name: String, notBefore: Date = Date(timeIntervalSinceNow: -86_400), notAfter: Date = Date(timeIntervalSinceNow: 86_400))
        throws -> LabIdentity
    {
        try Lab.pki.intermediate.leaf(commonName: name, dnsNames: ["reload.lab.test"], notBefore: notBefore, notAfter: notAfter)
    }

    /// A TLS listener on 127.0.0.1 whose connections take `identity`'s handler as they are accepted.
    static func withListener<T>(_ identity: ReloadingServerIdentity, _ body: (Int) async throws -> T) async throws -> T {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(identity.makeServerHandler()) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return try await withTeardown({ try? await channel.close() }) {
            try await body(channel.localAddress?.port ?? 0)
        }
    }

    /// The leaf a new connection to `port` is shown, presenting `client` when asked.
    static func presented(port: Int, client: LabIdentity? = nil) async throws -> Certificate? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        if let client {
            configuration.certificateChain = try client.chain.map { .certificate(try NIOSSLCertificate(bytes: Array($0.pemString.utf8), format: .pem)) }
            configuration.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(client.privateKeyPEM.utf8), format: .pem))
        }
        let context = try NIOSSLContext(configuration: configuration)
        let channel = try await TLSHandshake.connect(port: port) { try NIOSSLClientHandler(context: context, serverHostname: "reload.lab.test") }
        defer { channel.close(promise: nil) }
        guard let leaf = try await channel.nioSSL_peerCertificate().get() else { return nil }
        return try Certificate(derEncoded: try leaf.toDERBytes())
    }

    @Test func aNewConnectionIsShownTheNewCertificate() async throws {
        let folder = IdentityFolder()
        let a = try Self.server("server A")
        try folder.writePEM(a)
        let identity = try ReloadingServerIdentity(.init(certificateChain: folder.chain, key: folder.key))
        try await Self.withListener(identity) { port in
            #expect(try await Self.presented(port: port) == a.certificate)
            let b = try Self.server("server B")
            try folder.writePEM(b)
            #expect(identity.reload() == .reloaded(generation: 2))
            #expect(try await Self.presented(port: port) == b.certificate)
            // An expired replacement keeps B, with its reason.
            let expired = try Self.server("expired", notBefore: Date(timeIntervalSinceNow: -3 * 86_400), notAfter: Date(timeIntervalSinceNow: -86_400))
            try folder.writePEM(expired)
            #expect(
                identity.reload() == .rejected(.identity(.expired(path: folder.chain, notValidAfter: expired.certificate.notValidAfter))))
            #expect(identity.inForce.generation == 2)
            #expect(try await Self.presented(port: port) == b.certificate)
        }
    }

    @Test func aNewClientCABundleDecidesNewConnections() async throws {
        let folder = IdentityFolder()
        try folder.writePEM(try Self.server("server A"))
        try Lab.pki.root.certificate.pemString.write(toFile: folder["client-cas.pem"], atomically: true, encoding: .utf8)
        // TLS 1.2: the server's verdict on the client certificate ends the handshake itself.
        let identity = try ReloadingServerIdentity(
            .init(certificateChain: folder.chain, key: folder.key, clientCAs: folder["client-cas.pem"]),
            clientAuthentication: ClientAuthentication(requirement: .required, anchors: [])
        ) { $0.maximumTLSVersion = .tlsv12 }
        let (underRoot, partner) = (try #require(Lab.pki.clients["client"]), try #require(Lab.pki.clients["partner"]))
        try await Self.withListener(identity) { port in
            #expect(try await Self.presented(port: port, client: underRoot) != nil)
            await #expect(throws: (any Error).self) { _ = try await Self.presented(port: port, client: partner) }
            try Lab.pki.clientCA.certificate.pemString.write(toFile: folder["client-cas.pem"], atomically: true, encoding: .utf8)
            #expect(identity.reload() == .reloaded(generation: 2))
            #expect(try await Self.presented(port: port, client: partner) != nil)
            await #expect(throws: (any Error).self) { _ = try await Self.presented(port: port, client: underRoot) }
            // A bundle without a certificate keeps the client CA.
            try "no certificate here".write(toFile: folder["client-cas.pem"], atomically: true, encoding: .utf8)
            #expect(identity.reload() == .rejected(.clientCAs(path: folder["client-cas.pem"])))
            #expect(try await Self.presented(port: port, client: partner) != nil)
        }
    }
}

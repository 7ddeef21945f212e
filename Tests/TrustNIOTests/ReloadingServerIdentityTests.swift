import Foundation
import NIOConcurrencyHelpers
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
        let folder = try IdentityFolder()
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
            #expect(identity.current.generation == 2)
            #expect(try await Self.presented(port: port) == b.certificate)
        }
    }

    @Test func aNewClientCABundleDecidesNewConnections() async throws {
        let folder = try IdentityFolder()
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

    /// SPIFFE client authentication follows the client-CA file too: its bundles, not only the anchors NIOSSL is
    /// given, are rebuilt from the file, so that a rotated trust-domain root decides new connections.
    @Test func aRotatedSPIFFEBundleDecidesNewConnections() async throws {
        let folder = try IdentityFolder()
        try folder.writePEM(try Self.server("server A"))
        let (rootA, rootB) = (try LabAuthority.spiffeRoot(trustDomain: "example.org"), try LabAuthority.spiffeRoot(trustDomain: "example.org"))
        let clientID = "spiffe://example.org/ns/prod/sa/web"
        let (underA, underB) = (try rootA.svid(clientID), try rootB.svid(clientID))
        let cas = folder["client-cas.pem"]
        try rootA.certificate.pemString.write(toFile: cas, atomically: true, encoding: .utf8)
        let authentication = try ClientAuthentication(
            spiffeBundles: SPIFFETrustBundles([SPIFFEBundle(trustDomain: try SPIFFETrustDomain(parsing: "example.org"), anchors: [rootA.certificate])]),
            allowedSPIFFEIDs: [try SPIFFEIDMatcher(parsing: "spiffe://example.org/ns/prod/*")])
        let identity = try ReloadingServerIdentity(
            .init(certificateChain: folder.chain, key: folder.key, clientCAs: cas), clientAuthentication: authentication
        ) { $0.maximumTLSVersion = .tlsv12 }
        try await Self.withListener(identity) { port in
            #expect(try await Self.presented(port: port, client: underA) != nil)
            await #expect(throws: (any Error).self) { _ = try await Self.presented(port: port, client: underB) }
            try rootB.certificate.pemString.write(toFile: cas, atomically: true, encoding: .utf8)
            #expect(identity.reload() == .reloaded(generation: 2))
            #expect(identity.current.clientAuthentication?.spiffeBundles?.allAnchors == [rootB.certificate])
            #expect(try await Self.presented(port: port, client: underB) != nil)
            await #expect(throws: (any Error).self) { _ = try await Self.presented(port: port, client: underA) }
            // A bundle of another trust domain only: the allowed IDs would lose theirs, so it is refused.
            try LabAuthority.spiffeRoot(trustDomain: "other.test").certificate.pemString.write(toFile: cas, atomically: true, encoding: .utf8)
            guard case .rejected(let rejection) = identity.reload(), case .spiffeConfiguration(cas, let refused) = rejection.detail,
                case .noBundleForAllowedID(_, ["other.test"]) = refused.detail
            else {
                Issue.record("a bundle without the allowed IDs' trust domain was not refused: \(String(describing: identity.lastRejection))")
                return
            }
            #expect(identity.current.generation == 2)
            #expect(try await Self.presented(port: port, client: underB) != nil)
        }
    }

    /// A client-CA certificate that cannot be parsed refuses the bundle, naming it (not dropped while the others
    /// are trusted); observers are told each context taken and each refusal once, after the reload: one may poll.
    @Test func refusalsAreTypedAndObserversAreTold() throws {
        let folder = try IdentityFolder()
        try folder.writePEM(try Self.server("server A"))
        let cas = folder["client-cas.pem"]
        try Lab.pki.root.certificate.pemString.write(toFile: cas, atomically: true, encoding: .utf8)
        let identity = try ReloadingServerIdentity(
            .init(certificateChain: folder.chain, key: folder.key, clientCAs: cas), clientAuthentication: ClientAuthentication(anchors: []))
        let events = NIOLockedValueBox<[String]>([])
        identity.observe { [weak identity] event in
            // Called once the reload is over: polling from here does not deadlock.
            let polled = identity?.poll()
            switch event {
            case .reloaded(_, let inForce): events.withLockedValue { $0.append("reloaded \(inForce.generation) \(polled.map { "\($0)" } ?? "-")") }
            case .rejected(let error): events.withLockedValue { $0.append("rejected \(error)") }
            }
        }
        let garbage = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
        try (Lab.pki.root.certificate.pemString + "\n" + garbage).write(toFile: cas, atomically: true, encoding: .utf8)
        #expect(identity.reload() == .rejected(.clientCACertificate(path: cas, index: 2)))
        #expect(identity.reload() == .rejected(.clientCACertificate(path: cas, index: 2)))
        #expect(identity.current.clientAuthentication?.anchors == [Lab.pki.root.certificate])
        try Lab.pki.clientCA.certificate.pemString.write(toFile: cas, atomically: true, encoding: .utf8)
        #expect(identity.reload() == .reloaded(generation: 2))
        #expect(identity.current.clientAuthentication?.anchors == [Lab.pki.clientCA.certificate])
        #expect(
            events.withLockedValue { $0 } == [
                "rejected \(ReloadingServerIdentityError.clientCACertificate(path: cas, index: 2))", "reloaded 2 unchanged",
            ])
    }
}

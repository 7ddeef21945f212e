import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS
import Trust
import TrustNIO
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An HTTPS server on 127.0.0.1 (a random port) presenting a chosen certificate chain —
/// a badssl.com for tests and demos, with no network beyond loopback.
public final class LabServer: Sendable {
    /// HTTP versions a server offers over ALPN.
    public enum Protocols: Sendable {
        /// HTTP/1.1 only.
        case http1Only
        /// HTTP/2 and HTTP/1.1 both offered.
        case http2AndHTTP1
        /// HTTP/2 only.
        case http2Only
    }

    /// The server's name, as in its `hello from NAME` answer (`good`, `mtls-required`…).
    public let name: String
    /// The port the server listens on, on 127.0.0.1.
    public let port: Int
    /// The host name a client should use (the certificate's name; connect to 127.0.0.1).
    public let host: String
    /// `https`, or `http` for a plain server.
    public let scheme: String
    /// The bodies of `POST /reports` received by this server.
    public let reports: LabReportInbox
    private let channel: any Channel
    private let accepted: NIOLockedValueBox<Int>
    /// What each new TLS connection is set up with (nil for a plain server): read once per connection, so that
    /// ``replaceIdentity(chain:privateKey:)`` and ``replaceClientCAs(_:)`` apply to connections accepted after them.
    private let tls: NIOLockedValueBox<TLSState>?

    /// A TLS server's configuration, its context, and its client-certificate requirements.
    private struct TLSState: Sendable {
        var configuration: TLSConfiguration
        var context: NIOSSLContext
        var clientAuthentication: ClientAuthentication?
    }

    /// Connections the server has accepted since it started (TLS servers made by `start`).
    public var acceptedConnectionCount: Int { accepted.withLockedValue { $0 } }

    /// `https://HOST:PORT`; resolve HOST to 127.0.0.1 (clients in this package do so via
    /// their connect-address override).
    public var baseURL: String { "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)" }

    private init(
        name: String, port: Int, host: String, scheme: String = "https", channel: any Channel, reports: LabReportInbox,
        accepted: NIOLockedValueBox<Int> = NIOLockedValueBox(0), tls: NIOLockedValueBox<TLSState>? = nil
    ) {
        self.accepted = accepted
        self.tls = tls
        self.reports = reports
        self.name = name
        self.port = port
        self.host = host
        self.scheme = scheme
        self.channel = channel
    }

    /// A plain-HTTP/1.1 server (no TLS) with the same routes, for clear-text scenarios.
    public static func startPlain(name: String, host: String = "plain.lab.test", group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws
        -> LabServer
    {
        let authentication = LabHTTPAuthentication()
        let reports = LabReportInbox()
        let (channel, port) = try await bind(group: group) { channel in
            Self.configureHTTP1(channel, name: name, client: ClientAuthenticationRecord(), authentication: authentication, reports: reports)
        }
        return LabServer(name: name, port: port, host: host, scheme: "http", channel: channel, reports: reports)
    }

    /// A listener on 127.0.0.1 (a free port) whose connections `initialize` sets up.
    static func bind(group: any EventLoopGroup, _ initialize: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>) async throws -> (any Channel, Int) {
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer(initialize)
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = channel.localAddress?.port else { throw LabError.cannotWrite("server", "no local port") }
        return (channel, port)
    }

    /// A TLS 1.2+ server configuration presenting `chain` (leaf first) with `privateKey` (also for servers built
    /// with other frameworks over the lab PKI).
    public static func serverConfiguration(chain: [Certificate], privateKey: Certificate.PrivateKey) throws -> TLSConfiguration {
        // PEM, not DER: BoringSSL reads DER certificates of at most 100 KB, and the lab serves larger ones.
        let certificates = try chain.map { try NIOSSLCertificateSource.certificate(NIOSSLCertificate(bytes: Array($0.pemString.utf8), format: .pem)) }
        let keyPEM = try privateKey.serializeAsPEM().pemString
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: certificates, privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem)))
        configuration.minimumTLSVersion = .tlsv12
        return configuration
    }

    /// Starts a server presenting `chain` (leaf first) with `privateKey`.
    public static func start(
        name: String, host: String, chain: [Certificate], privateKey: Certificate.PrivateKey,
        protocols: Protocols = .http2AndHTTP1, maximumTLSVersion: TLSVersion? = nil, minimumTLSVersionOverride: TLSVersion? = nil,
        clientAuthentication: ClientAuthentication? = nil,
        closesAfterHandshake: Bool = false,
        maximumConcurrentStreams: Int = 100,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> LabServer {
        var configuration = try serverConfiguration(chain: chain, privateKey: privateKey)
        configuration.minimumTLSVersion = minimumTLSVersionOverride ?? .tlsv12
        configuration.maximumTLSVersion = maximumTLSVersion
        switch protocols {
        case .http1Only: configuration.applicationProtocols = ["http/1.1"]
        case .http2AndHTTP1: configuration.applicationProtocols = ["h2", "http/1.1"]
        case .http2Only: configuration.applicationProtocols = ["h2"]
        }
        clientAuthentication?.apply(to: &configuration)
        let tls = NIOLockedValueBox(
            TLSState(configuration: configuration, context: try NIOSSLContext(configuration: configuration), clientAuthentication: clientAuthentication))
        let authentication = LabHTTPAuthentication()
        let reports = LabReportInbox()
        let accepted = NIOLockedValueBox(0)
        let streams = maximumConcurrentStreams
        let (channel, port) = try await bind(group: group) { channel in
            accepted.withLockedValue { $0 += 1 }
            let record = ClientAuthenticationRecord()
            let (context, clientAuthentication) = tls.withLockedValue { ($0.context, $0.clientAuthentication) }
            return channel.eventLoop.makeCompletedFuture {
                let tls = clientAuthentication.map { $0.makeServerHandler(context: context, record: record) } ?? NIOSSLServerHandler(context: context)
                try channel.pipeline.syncOperations.addHandler(tls)
                if closesAfterHandshake { try channel.pipeline.syncOperations.addHandler(CloseAfterHandshakeHandler()) }
            }.flatMap {
                if closesAfterHandshake { return channel.eventLoop.makeSucceededVoidFuture() }
                switch protocols {
                case .http1Only:
                    return Self.configureHTTP1(channel, name: name, client: record, authentication: authentication, reports: reports)
                case .http2Only:
                    return Self.configureHTTP2(
                        channel, name: name, client: record, authentication: authentication, reports: reports, maximumConcurrentStreams: streams)
                case .http2AndHTTP1:
                    return channel.configureHTTP2SecureUpgrade(
                        h2ChannelConfigurator: {
                            Self.configureHTTP2(
                                $0, name: name, client: record, authentication: authentication, reports: reports, maximumConcurrentStreams: streams)
                        },
                        http1ChannelConfigurator: { Self.configureHTTP1($0, name: name, client: record, authentication: authentication, reports: reports) })
                }
            }
        }
        return LabServer(name: name, port: port, host: host, channel: channel, reports: reports, accepted: accepted, tls: tls)
    }

    /// Presents `chain` (leaf first) with `privateKey` on the connections accepted from now on; those already
    /// open keep the certificate they were set up with. A new `NIOSSLContext` is made once, here, and each new
    /// connection takes the context in force when it is accepted.
    public func replaceIdentity(chain: [Certificate], privateKey: Certificate.PrivateKey) throws {
        let identity = try Self.serverConfiguration(chain: chain, privateKey: privateKey)
        try replaceTLS { configuration, _ in
            configuration.certificateChain = identity.certificateChain
            configuration.privateKey = identity.privateKey
        }
    }

    /// Accepts client certificates that chain to `anchors` (and names them as acceptable CAs in its
    /// CertificateRequest, RFC 8446 §4.3.2) on the connections accepted from now on; those already open keep
    /// the verdict they had. Only for a server started with client authentication; with SPIFFE client authentication
    /// the bundles are rebuilt from `anchors` as a `ReloadingServerIdentity` rebuilds them from its client-CA file.
    public func replaceClientCAs(_ anchors: [Certificate]) throws {
        try replaceTLS { configuration, clientAuthentication in
            guard let current = clientAuthentication else { throw LabError.cannotWrite(name, "the server asks for no client certificate") }
            let replaced = try current.trusting(anchors, from: "\(name)'s client CAs")
            replaced.apply(to: &configuration)
            clientAuthentication = replaced
        }
    }

    /// A new context from the configuration as `change` leaves it, for the connections accepted from now on.
    private func replaceTLS(_ change: (inout TLSConfiguration, inout ClientAuthentication?) throws -> Void) throws {
        guard let tls else { throw LabError.cannotWrite(name, "a plain server has no TLS identity") }
        try tls.withLockedValue { current in
            var state = current
            try change(&state.configuration, &state.clientAuthentication)
            state.context = try NIOSSLContext(configuration: state.configuration)
            current = state
        }
    }

    /// Starts the lab's server `name` (see ``LabPKI/serverNames``); over HTTP/2 it allows `maximumConcurrentStreams`
    /// streams per connection (its SETTINGS_MAX_CONCURRENT_STREAMS, RFC 9113 §6.5.2).
    public static func start(
        _ name: String, pki: LabPKI, protocols: Protocols = .http2AndHTTP1, maximumConcurrentStreams: Int = 100,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> LabServer {
        guard let identity = pki.servers[name], let chain = pki.presentedChains[name] else {
            throw LabError.cannotWrite(name, "no such lab server")
        }
        return try await start(
            name: name, host: LabPKI.hostName(for: name), chain: chain, privateKey: identity.privateKey, protocols: protocols,
            maximumConcurrentStreams: maximumConcurrentStreams, group: group)
    }

    /// The lab's mutual-TLS servers; each presents `good`'s certificate under its own host name
    /// (covered by `*.good.lab.test`).
    public enum MutualTLSMode: String, Sendable, CaseIterable {
        /// A client certificate under the lab root is required.
        case required
        /// A client certificate is requested; without one the connection goes on, anonymously.
        case optional
        /// Only certificates from the lab's client CA (``LabPKI/clientCA``) are accepted.
        case clientCAOnly = "client-ca-only"

        /// The host name of this mode's server, `mtls-MODE.good.lab.test`.
        public var host: String { "mtls-\(rawValue).good.\(LabPKI.domain)" }

        /// The client-certificate requirements of this mode's server.
        public func clientAuthentication(pki: LabPKI) -> ClientAuthentication {
            switch self {
            case .required: ClientAuthentication(requirement: .required, anchors: [pki.root.certificate])
            case .optional: ClientAuthentication(requirement: .optional, anchors: [pki.root.certificate])
            case .clientCAOnly: ClientAuthentication(requirement: .required, anchors: [pki.clientCA.certificate])
            }
        }
    }

    /// Starts one of the lab's mutual-TLS servers (`GET /whoami` answers with the verified client).
    public static func start(
        mutualTLS mode: MutualTLSMode, pki: LabPKI, protocols: Protocols = .http2AndHTTP1,
        maximumTLSVersion: TLSVersion? = nil,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> LabServer {
        guard let good = pki.servers["good"] else { throw LabError.cannotWrite("good", "no such lab server") }
        return try await start(
            name: "mtls-\(mode.rawValue)", host: mode.host, chain: good.chain, privateKey: good.privateKey, protocols: protocols,
            maximumTLSVersion: maximumTLSVersion, clientAuthentication: mode.clientAuthentication(pki: pki), group: group)
    }

    @Sendable static func configureHTTP1(
        _ channel: any Channel, name: String, client: ClientAuthenticationRecord, authentication: LabHTTPAuthentication,
        reports: LabReportInbox
    ) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
            try channel.pipeline.syncOperations.addHandler(LabHTTPHandler(name: name, client: client, authentication: authentication, reports: reports))
        }
    }

    @Sendable static func configureHTTP2(
        _ channel: any Channel, name: String, client: ClientAuthenticationRecord, authentication: LabHTTPAuthentication,
        reports: LabReportInbox, maximumConcurrentStreams: Int = 100
    ) -> EventLoopFuture<Void> {
        let settings =
            nioDefaultSettings.filter { $0.parameter != .maxConcurrentStreams }
            + [HTTP2Setting(parameter: .maxConcurrentStreams, value: maximumConcurrentStreams)]
        return channel.configureHTTP2Pipeline(
            mode: .server, initialLocalSettings: settings,
            inboundStreamInitializer: { stream in
                stream.eventLoop.makeCompletedFuture {
                    try stream.pipeline.syncOperations.addHandlers([
                        HTTP2FramePayloadToHTTP1ServerCodec(), LabHTTPHandler(name: name, client: client, authentication: authentication, reports: reports),
                    ])
                }
            }
        ).flatMapThrowing { _ in try channel.pipeline.syncOperations.addHandler(LabGracefulClose()) }
    }

    /// A faulty server: completes the TLS handshake, then closes the connection before any request.
    private final class CloseAfterHandshakeHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let tlsEvent = event as? TLSUserEvent, case .handshakeCompleted = tlsEvent {
                context.close(promise: nil)
                return
            }
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Whether the listener is still open.
    public var isListening: Bool { channel.isActive }

    /// Stops accepting connections and closes the listener.
    public func shutdown() async throws {
        try await channel.close()
    }
}

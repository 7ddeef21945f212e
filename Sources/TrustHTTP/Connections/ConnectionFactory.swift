import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Trust
import TrustNIO

/// Opens connections: TCP, then TLS with the server-trust verifier in the handshake, then
/// HTTP/1.1 or HTTP/2 according to ALPN.
struct ConnectionFactory: Sendable {
    let group: any EventLoopGroup
    let sslContext: NIOSSLContext
    /// The same with TLS 1.3 as the minimum, for hosts whose trust configuration entry asks for it
    /// (nil when no entry does, or when the session already requires TLS 1.3).
    let tls13Context: NIOSSLContext?
    /// For connections that can answer a client-certificate request (a per-connection context with NIOSSL's context callback).
    let tlsConfiguration: TLSConfiguration
    let resolve: [String: String]
    let limits: ResponseLimits
    let decompression: ResponseDecompression

    init(configuration: SessionConfiguration, group: any EventLoopGroup) throws {
        self.limits = configuration.responseLimits
        self.decompression = configuration.decompression
        var tls = TLSConfiguration.trustClient(
            minimumTLSVersion: configuration.minimumTLSVersion == .tls13 ? .tlsv13 : .tlsv12,
            applicationProtocols: configuration.httpVersion == .http1Only ? ["http/1.1"] : ["h2", "http/1.1"])
        tls.maximumTLSVersion = nil
        // Closing sends close_notify and waits at most this long for the peer's (NIOSSL's default
        // is 5 s): HTTP messages carry their own framing, so nothing is lost by not waiting, and a
        // hostile peer that never answers must not hold a connection — or a deadline — open.
        tls.shutdownTimeout = .milliseconds(100)
        self.tlsConfiguration = tls
        self.sslContext = try Self.makeContext( tls)
        if tls.minimumTLSVersion != .tlsv13, case .configuration(let evaluator, _) = configuration.serverTrust,
            ([evaluator.configuration.base] + evaluator.configuration.hosts).contains(where: { $0.minimumTLSVersion == .tls13 })
        {
            var tls13 = tls
            tls13.minimumTLSVersion = .tlsv13
            self.tls13Context = try Self.makeContext( tls13)
        } else {
            self.tls13Context = nil
        }
        self.group = group
        self.resolve = configuration.resolve
    }

    /// A TLS context, counted (``ConstructionCounter/tlsContexts``): made when the session is, and per
    /// connection only where a client-certificate challenge must be answered for that connection.
    static func makeContext(_ configuration: TLSConfiguration) throws -> NIOSSLContext {
        ConstructionCounter.tlsContexts.increment()
        return try NIOSSLContext(configuration: configuration)
    }

    /// The address to connect to for `origin` (a `resolve` override, or the host itself).
    func address(for origin: Origin) -> String {
        resolve["\(origin.host):\(origin.port)"] ?? resolve[origin.host] ?? origin.host
    }

    /// Connects to `origin` — through `proxy` when given: a CONNECT tunnel for https (with
    /// `proxyAuthorization`; a refusal throws ``ProxyRefusal``), a plain connection to the proxy for http.
    /// `requiresTLS13`: the host's trust configuration entry asks for TLS 1.3 — offered as the only
    /// version in the handshake itself, so nothing (evaluation, client certificate) happens over less.
    func connect(
        origin: Origin, verifier: ServerTrustVerifier?, clientCertificate: ClientCertificateChallenge? = nil, requiresTLS13: Bool = false,
        shareable: Bool, timeout: Duration, url: URL,
        proxy: ProxyConfiguration? = nil, proxyAuthorization: String? = nil,
        trustError: @escaping @Sendable (TrustDecision) -> SessionError
    ) async throws -> Connection {
        let eventLoop = group.next()
        let handshake = eventLoop.makePromise(of: NegotiatedProtocol.self)
        let record = TrustRecord()
        let errorLog = ConnectionErrorLog()
        var sslContext = requiresTLS13 ? tls13Context ?? self.sslContext : self.sslContext
        if let clientCertificate, verifier != nil {
            var configuration = tlsConfiguration
            configuration.sslContextCallback = clientCertificate.callback
            if requiresTLS13 { configuration.minimumTLSVersion = .tlsv13 }
            do {
                sslContext = try Self.makeContext( configuration)
            } catch {
                throw SessionError(.secureConnectionFailed, "could not set up TLS for \(origin)", url: url, underlyingError: error)
            }
        }
        let context = sslContext
        let limits = self.limits
        let decompression = self.decompression
        let timeAmount = TimeAmount.nanoseconds(timeout.nanoseconds)
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(timeAmount)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let verifier {
                        @Sendable func addTLS(_ pipeline: ChannelPipeline.SynchronousOperations) throws {
                            let tls = try verifier.makeClientHandler(context: context, host: origin.host, record: record)
                            try pipeline.addHandler(tls)
                            try pipeline.addHandler(ConnectionErrorRecorder(log: errorLog))
                            try pipeline.addHandler(HandshakeWaiter(promise: handshake, limits: limits, decompression: decompression, errorLog: errorLog))
                        }
                        if proxy != nil {
                            try channel.pipeline.syncOperations.addHandler(ProxyTunnelHandler(
                                authority: origin.authority, proxyAuthorization: proxyAuthorization, maximumHeadSize: limits.maximumHeadSize,
                                established: { try addTLS($0.pipeline.syncOperations) }, failed: { handshake.fail($0) }))
                        } else {
                            try addTLS(channel.pipeline.syncOperations)
                        }
                    } else {
                        handshake.succeed(try HandshakeWaiter.configure(channel, http2: false, limits: limits, decompression: decompression))
                    }
                }
            }
        let channel: any Channel
        let target = proxy.map { (address(for: $0.origin), $0.port) } ?? (address(for: origin), origin.port)
        do {
            channel = try await bootstrap.connect(host: target.0, port: target.1).get()
        } catch {
            handshake.fail(error)
            if let proxy {
                let failure = Self.connectError(error, origin: proxy.origin, url: url)
                throw SessionError(failure.code, "the proxy \(proxy): " + failure.message, url: url, underlying: failure.underlying)
            }
            throw Self.connectError(error, origin: origin, url: url)
        }

        let negotiated: NegotiatedProtocol
        let timer = eventLoop.scheduleTask(in: timeAmount) {
            handshake.fail(HandshakeTimeout())
            channel.close(promise: nil)
        }
        do {
            negotiated = try await withTaskCancellationHandler {
                try await handshake.futureResult.get()
            } onCancel: {
                channel.close(promise: nil)
            }
            timer.cancel()
        } catch {
            timer.cancel()
            channel.close(promise: nil)
            if error is ProxyRefusal { throw error }
            if let exceeded = error as? ResponseLimitExceeded { throw SessionError(exceeded.limit, url: url) }
            if record.decision?.isTrusted != false, let clientError = ClientCertificateChallenge.error(clientCertificate, "\(error)", origin: origin, url: url) {
                throw clientError
            }
            var failure = Self.handshakeError(error, record: record, origin: origin, url: url, trustError: trustError)
            if requiresTLS13 && failure.code == .secureConnectionFailed {
                failure.message += " (its trust configuration entry requires TLS 1.3)"
            }
            throw failure
        }

        return Connection(
            channel: channel, multiplexer: negotiated.multiplexer, trustRecord: verifier == nil ? nil : record, shareable: shareable,
            tlsVersion: negotiated.tlsVersion, clientCertificate: clientCertificate, errors: errorLog,
            usesAbsoluteForm: proxy != nil && !origin.isSecure, decompression: negotiated.decompression)
    }

    struct HandshakeTimeout: Error {}

    static func connectError(_ error: any Error, origin: Origin, url: URL) -> SessionError {
        if let channelError = error as? ChannelError, case .connectTimeout = channelError {
            return SessionError(.timedOut, "connecting to \(origin) timed out", url: url, underlyingError: error)
        }
        if let connection = error as? NIOConnectionError, connection.connectionErrors.isEmpty,
            connection.dnsAError != nil || connection.dnsAAAAError != nil
        {
            return SessionError(.cannotFindHost, "the host \(origin.host) could not be resolved", url: url, underlyingError: error)
        }
        // A host that cannot be a peer name is refused when the TLS handler is made, which NIO reports
        // per connection attempt: the name's own reason is the error, not "could not connect".
        let nameError = (error as? PeerNameError)
            ?? (error as? NIOConnectionError)?.connectionErrors.lazy.compactMap { $0.error as? PeerNameError }.first
        if let nameError {
            return SessionError(.badURL, "the host name is not valid: \(nameError)", url: url)
        }
        return SessionError(.cannotConnectToHost, "could not connect to \(origin)", url: url, underlyingError: error)
    }

    static func handshakeError(_ error: any Error, record: TrustRecord, origin: Origin, url: URL, trustError: (TrustDecision) -> SessionError) -> SessionError {
        if let decision = record.decision, !decision.isTrusted {
            return trustError(decision)
        }
        if error is HandshakeTimeout {
            return SessionError(.timedOut, "the TLS handshake with \(origin) timed out", url: url)
        }
        return SessionError(.secureConnectionFailed, "the TLS handshake with \(origin) failed", url: url, underlyingError: error)
    }
}

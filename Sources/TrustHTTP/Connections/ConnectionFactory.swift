import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Trust
import TrustNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Opens connections: TCP, then TLS with the server-trust verifier in the handshake, then
/// HTTP/1.1 or HTTP/2 according to ALPN.
struct ConnectionFactory: Sendable {
    let group: any EventLoopGroup
    let sslContext: NIOSSLContext
    /// The same with TLS 1.3 as the minimum, for hosts whose trust configuration entry asks for it: made for the
    /// first connection that needs it (a configuration that reloads may ask for it at any time), then kept.
    private let tls13Context = NIOLockedValueBox<NIOSSLContext?>(nil)
    /// For connections that can answer a client-certificate request (a per-connection context with NIOSSL's context callback).
    let tlsConfiguration: TLSConfiguration
    let resolve: [String: String]
    let limits: ResponseLimits
    let decompression: ResponseDecompression

    init(configuration: TrustHTTPClientConfiguration, group: any EventLoopGroup) throws {
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
        self.sslContext = try Self.makeContext(tls)
        self.group = group
        self.resolve = configuration.resolve
    }

    /// A TLS context, counted (``ConstructionCounter/tlsContexts``): made when the session is, once more for the
    /// first connection whose host's entry asks for TLS 1.3, and per connection only where a client-certificate
    /// challenge must be answered for that connection.
    static func makeContext(_ configuration: TLSConfiguration) throws -> NIOSSLContext {
        ConstructionCounter.tlsContexts.increment()
        return try NIOSSLContext(configuration: configuration)
    }

    /// The address to connect to for `origin` (a `resolve` override, or the host itself).
    func address(for origin: Origin) -> String {
        resolve["\(origin.host):\(origin.port)"] ?? resolve[origin.host] ?? origin.host
    }

    /// Opens the connection `specification` describes: a plain connection, TLS with the server-trust
    /// verifier in the handshake, or either through a proxy. Returns once HTTP is set up (after the
    /// handshake and its trust decision), or throws the ``TrustHTTPClientError`` that says why not (a proxy's
    /// refusal of CONNECT throws ``ProxyRefusal``).
    ///
    /// The work that does not wait (the pipeline's setup, the connection's making, the errors) is done in
    /// synchronous functions kept apart (`@inline(never)`): see "Frame sizes" in the "How a request flows"
    /// article for why, and the measurement.
    func connect(_ specification: ConnectionSpecification) async throws -> Connection {
        let pending = connecting(specification)
        return try await withTaskCancellationHandler {
            try await pending.connection.get()
        } onCancel: {
            pending.abandon()
        }
    }

    /// The same connection made by the event loop alone, in no task: what the pool's own attempts use
    /// (``PoolConnectionAttempts``), which no request owns and which would otherwise each need a task of their own
    /// (its memory, freed once the connection is made, was measured to fragment the heap beside the connection's).
    func connecting(_ specification: ConnectionSpecification) -> PendingConnection {
        let attempt = ConnectionAttempt(handshake: group.next().makePromise(of: NegotiatedProtocol.self))
        let connection = startConnecting(specification, attempt).flatMap { channel in
            self.negotiation(on: channel, specification, attempt)
        }
        return PendingConnection(connection: connection, abandon: { attempt.abandon() })
    }

    /// TCP to the origin, or to the proxy, on the attempt's event loop, with the pipeline's first
    /// handlers added once connected; a failure says which of the two could not be reached.
    @inline(never)
    private func startConnecting(_ specification: ConnectionSpecification, _ attempt: ConnectionAttempt) -> EventLoopFuture<any Channel> {
        let eventLoop = attempt.handshake.futureResult.eventLoop
        let initialize: @Sendable (any Channel) throws -> Void
        if let handshake = specification.handshake {
            let context: NIOSSLContext
            do {
                context = try tlsContext(for: specification, handshake)
            } catch {
                attempt.handshake.fail(error)
                return eventLoop.makeFailedFuture(error)
            }
            if specification.proxy == nil {
                initialize = { channel in try self.addTLS(channel.pipeline.syncOperations, handshake, context: context, attempt) }
            } else {
                initialize = { channel in try self.addTunnel(channel, specification, handshake, context: context, attempt) }
            }
        } else {
            initialize = { try self.addPlainHTTP($0, attempt) }
        }
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(TimeAmount(specification.timeout))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try initialize(channel) } }
        let origin = specification.origin
        let target = specification.proxy.map { (address(for: $0.origin), $0.port) } ?? (address(for: origin), origin.port)
        return bootstrap.connect(host: target.0, port: target.1).flatMapErrorThrowing { error in
            attempt.handshake.fail(error)
            throw Self.connectFailure(error, specification)
        }
    }

    /// The connection, once HTTP is set up over it.
    @inline(never)
    private func makeConnection(
        _ channel: any Channel, _ negotiated: NegotiatedProtocol, _ specification: ConnectionSpecification, _ attempt: ConnectionAttempt
    ) -> Connection {
        Connection(
            channel: channel, multiplexer: negotiated.multiplexer, serverTrust: specification.handshake?.record.decision,
            shareable: specification.shareable, tlsVersion: negotiated.tlsVersion, errors: attempt.errorLog,
            usesAbsoluteForm: specification.proxy != nil && !specification.origin.isSecure,
            decompression: negotiated.decompression)
    }

    /// The session's context (the TLS 1.3 one when the host's entry asks for it), or — when a
    /// client-certificate challenge must be answered for this connection — one of its own with
    /// NIOSSL's context callback, which receives no connection to tell apart.
    private func tlsContext(for specification: ConnectionSpecification, _ handshake: HandshakeChallenges) throws -> NIOSSLContext {
        guard let callback = handshake.clientCertificateCallback else {
            guard specification.requiresTLS13, tlsConfiguration.minimumTLSVersion != .tlsv13 else { return sslContext }
            if let context = tls13Context.withLockedValue({ $0 }) { return context }
            var configuration = tlsConfiguration
            configuration.minimumTLSVersion = .tlsv13
            let made = try makeContext(configuration, for: specification)
            // Two first connections may both make one: the first stored is kept, and every later one uses it.
            return tls13Context.withLockedValue { context in
                if let context { return context }
                context = made
                return made
            }
        }
        var configuration = tlsConfiguration
        configuration.sslContextCallback = callback
        if specification.requiresTLS13 { configuration.minimumTLSVersion = .tlsv13 }
        return try makeContext(configuration, for: specification)
    }

    /// A context for `specification`'s connection, its failure a request's error.
    private func makeContext(_ configuration: TLSConfiguration, for specification: ConnectionSpecification) throws -> NIOSSLContext {
        do {
            return try Self.makeContext(configuration)
        } catch {
            throw TrustHTTPClientError(
                .secureConnectionFailed, "could not set up TLS for \(specification.origin)", url: specification.url, underlyingError: error)
        }
    }

    /// Plain HTTP/1.1 at once (no handshake to wait for).
    private func addPlainHTTP(_ channel: any Channel, _ attempt: ConnectionAttempt) throws {
        attempt.handshake.succeed(try HandshakeWaiter.configure(channel, http2: false, limits: limits, decompression: decompression))
    }

    /// TLS with the verifier in the handshake; HTTP follows as ALPN decides (``HandshakeWaiter``).
    private func addTLS(
        _ pipeline: ChannelPipeline.SynchronousOperations, _ handshake: HandshakeChallenges, context: NIOSSLContext, _ attempt: ConnectionAttempt
    ) throws {
        try pipeline.addHandler(handshake.verifier.makeClientHandler(context: context, host: handshake.origin.host, record: handshake.record))
        try pipeline.addHandler(ConnectionErrorRecorder(log: attempt.errorLog))
        try pipeline.addHandler(HandshakeWaiter(promise: attempt.handshake, limits: limits, decompression: decompression, errorLog: attempt.errorLog))
    }

    /// A CONNECT tunnel through the proxy, then TLS to the origin inside it.
    private func addTunnel(
        _ channel: any Channel, _ specification: ConnectionSpecification, _ handshake: HandshakeChallenges, context: NIOSSLContext,
        _ attempt: ConnectionAttempt
    ) throws {
        let tunnel = ProxyTunnelHandler(
            authority: specification.origin.authority, proxyAuthorization: specification.proxyAuthorization, maximumHeadSize: limits.maximumHeadSize,
            established: { try self.addTLS($0.pipeline.syncOperations, handshake, context: context, attempt) },
            failed: { attempt.handshake.fail($0) })
        try channel.pipeline.syncOperations.addHandler(tunnel)
    }

    /// Why TCP to the origin, or to the proxy, could not be set up.
    @inline(never)
    private static func connectFailure(_ error: any Error, _ specification: ConnectionSpecification) -> any Error {
        guard let proxy = specification.proxy else { return connectError(error, origin: specification.origin, url: specification.url) }
        let failure = connectError(error, origin: proxy.origin, url: specification.url)
        return TrustHTTPClientError(failure.code, "the proxy \(proxy): " + failure.message, url: specification.url, underlying: failure.underlying)
    }

    /// The connection once the handshake and HTTP are set up, within the connect timeout (or until the attempt is
    /// abandoned: its channel closed); a failure is mapped to its ``TrustHTTPClientError`` here, once.
    private func negotiation(on channel: any Channel, _ specification: ConnectionSpecification, _ attempt: ConnectionAttempt)
        -> EventLoopFuture<Connection>
    {
        attempt.connected(channel)
        let timer = channel.eventLoop.scheduleTask(in: TimeAmount(specification.timeout)) {
            attempt.handshake.fail(HandshakeTimeout())
            channel.close(promise: nil)
        }
        // `specification` (its handshake's challenges, which NIOSSL's callbacks hold weakly) lives until this ends.
        return attempt.handshake.futureResult.always { _ in
            timer.cancel()
            attempt.settled()
        }.flatMapErrorThrowing { error in
            channel.close(promise: nil)
            throw Self.failure(error, specification, attempt)
        }.map { negotiated in
            self.makeConnection(channel, negotiated, specification, attempt)
        }
    }

    /// Why the handshake (or the tunnel before it) failed, as the error the caller gets.
    @inline(never)
    private static func failure(_ error: any Error, _ specification: ConnectionSpecification, _ attempt: ConnectionAttempt) -> any Error {
        let (origin, url) = (specification.origin, specification.url)
        if error is ProxyRefusal { return error }
        if let exceeded = error as? ResponseLimitExceeded { return TrustHTTPClientError(exceeded.limit, url: url) }
        if let explained = specification.handshake?.error(after: "\(error)") { return explained }
        var failure =
            error is HandshakeTimeout
            ? TrustHTTPClientError(.timedOut, "the TLS handshake with \(origin) timed out", url: url)
            : TrustHTTPClientError(handshake: error, origin: origin, url: url)
        if specification.requiresTLS13 && failure.code == .secureConnectionFailed {
            failure.message += " (its trust configuration entry requires TLS 1.3)"
        }
        return failure
    }

    struct HandshakeTimeout: Error {}

    /// Why TCP to `origin` failed, from NIO's typed errors (the package's `TrustHTTPClientError(connecting:url:)`, for `trust inspect`).
    static func connectError(_ error: any Error, origin: Origin, url: URL) -> TrustHTTPClientError {
        if let channelError = error as? ChannelError, case .connectTimeout = channelError {
            return TrustHTTPClientError(.timedOut, "connecting to \(origin) timed out", url: url, underlyingError: error)
        }
        if let connection = error as? NIOConnectionError, connection.connectionErrors.isEmpty,
            connection.dnsAError != nil || connection.dnsAAAAError != nil
        {
            return TrustHTTPClientError(.cannotFindHost, "the host \(origin.host) could not be resolved", url: url, underlyingError: error)
        }
        // A host that cannot be a peer name is refused when the TLS handler is made, which NIO reports
        // per connection attempt: the name's own reason is the error, not "could not connect".
        let nameError =
            (error as? PeerNameError)
            ?? (error as? NIOConnectionError)?.connectionErrors.lazy.compactMap { $0.error as? PeerNameError }.first
        if let nameError {
            return TrustHTTPClientError(.badURL, "the host name is not valid: \(nameError)", url: url)
        }
        return TrustHTTPClientError(.cannotConnectToHost, "could not connect to \(origin)", url: url, underlyingError: error)
    }
}

extension TrustHTTPClientError {
    /// The error for a TCP connection to `url`'s host that could not be made (a timeout, a name that does not
    /// resolve, a refusal), classified from NIO's typed errors as a ``TrustHTTPClient``'s own connections are.
    package init(connecting error: any Error, url: URL) {
        guard let origin = Origin(url) else {
            self.init(.badURL, "the URL has no usable host", url: url, underlyingError: error)
            return
        }
        self = ConnectionFactory.connectError(error, origin: origin, url: url)
    }

    /// The error for a TLS handshake with `url`'s host that failed with `error`, classified
    /// (``HandshakeFailure``) as a ``TrustHTTPClient``'s own handshakes are.
    /// - Parameters:
    ///   - error: what the handshake failed with (NIOSSL's error, or the channel's).
    ///   - url: the URL whose host the handshake was with.
    ///   - clientCertificateRequested: the server asked for a client certificate and none was sent.
    package init(handshake error: any Error, url: URL, clientCertificateRequested: Bool = false) {
        let origin = Origin(url) ?? Origin(scheme: "https", host: url.host ?? "?", port: url.port ?? 443)
        self.init(handshake: error, origin: origin, url: url, clientCertificateRequested: clientCertificateRequested)
    }

    init(handshake error: any Error, origin: Origin, url: URL, clientCertificateRequested: Bool = false) {
        let failure = HandshakeFailure(error, clientCertificateRequested: clientCertificateRequested)
        let code: Code = failure == .clientCertificateRequired ? .clientCertificateRequired : .secureConnectionFailed
        let detail: String
        switch failure.kind {
        case .other(let reason): detail = reason.map { " (BoringSSL: \($0))" } ?? ""
        default: detail = ": " + failure.explanation(url: url).summary
        }
        self.init(code, "the TLS handshake with \(origin) failed" + detail, url: url, underlyingError: error)
        handshakeFailure = failure
    }
}

/// What one connection needs: where it goes (directly or through a proxy), its handshake's challenges
/// (server trust and client certificate; nil for plain HTTP), the TLS minimum of its host, whether
/// other requests may share it, and how long connecting may take.
struct ConnectionSpecification: Sendable {
    var origin: Origin
    var handshake: HandshakeChallenges?
    /// The host's trust configuration entry asks for TLS 1.3 — offered as the only version in the
    /// handshake itself, so nothing (evaluation, client certificate) happens over less.
    var requiresTLS13 = false
    var shareable: Bool
    /// TCP, and then the handshake with its trust decision, each within this.
    var timeout: Duration
    /// The request's URL, for errors.
    var url: URL
    var proxy: ProxyConfiguration?
    var proxyAuthorization: String?
}

/// One attempt's shared state: the handshake's promise (completed by ``HandshakeWaiter``, a tunnel's
/// failure or the timeout), the connection's error log, and its channel while the handshake runs.
struct ConnectionAttempt: Sendable {
    let handshake: EventLoopPromise<NegotiatedProtocol>
    let errorLog = ConnectionErrorLog()
    /// The channel once TCP is up (until the handshake ends), and whether the attempt was abandoned: whichever of
    /// the two comes second closes the channel.
    private let watch = NIOLockedValueBox<(channel: (any Channel)?, abandoned: Bool)>((nil, false))

    /// TCP is up: the handshake begins on `channel`, closed at once if the attempt is abandoned already.
    func connected(_ channel: any Channel) {
        let abandoned = watch.withLockedValue { state -> Bool in
            state.channel = channel
            return state.abandoned
        }
        if abandoned { channel.close(promise: nil) }
    }

    /// Nobody wants the connection any more: its channel is closed, now or as soon as TCP is up (the handshake
    /// then fails as a closed connection's does).
    func abandon() {
        let channel = watch.withLockedValue { state -> (any Channel)? in
            state.abandoned = true
            return state.channel
        }
        channel?.close(promise: nil)
    }

    /// The handshake ended: the channel is the connection's (or closed), no longer the attempt's.
    func settled() {
        watch.withLockedValue { $0.channel = nil }
    }
}

/// A connection being made (``ConnectionFactory/connecting(_:)``): its outcome, and a way to abandon it.
struct PendingConnection: Sendable {
    let connection: EventLoopFuture<Connection>
    let abandon: @Sendable () -> Void
}

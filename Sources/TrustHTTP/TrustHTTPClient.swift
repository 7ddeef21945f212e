import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Tracing
import Trust
import TrustNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An HTTPS client with URLSession's authentication-challenge model, where server trust is
/// decided inside the TLS handshake by the `Trust` engine.
///
/// ```swift
/// var configuration = TrustHTTPClientConfiguration()
/// configuration.serverTrust = try PublicKeysTrustEvaluator(pins: pins)
/// let session = try TrustHTTPClient(configuration: configuration)
/// let response = try await session.data(for: TrustHTTPClientRequest(url: URL(string: "https://api.example.com/")!))
/// ```
///
/// - Every new connection is evaluated (there is no TLS session resumption); with no challenge
///   handler, a trusted decision may be reused for the identical chain, host and trust
///   configuration (``TrustHTTPClientConfiguration/evaluationCache``, `TrustEvaluationCache`).
///   Pooled connections are keyed by origin *and* trust configuration.
/// - A request with its own challenge handler never reuses a pooled connection and its
///   connection is never pooled: the handler is asked for that request's connection.
/// - Call ``shutdown()`` when done.
public final class TrustHTTPClient: Sendable {
    /// The configuration the session was created with.
    public let configuration: TrustHTTPClientConfiguration
    private let factory: ConnectionFactory
    private let pool: ConnectionPool
    private let delegateHandler: NIOLockedValueBox<(any ChallengeHandler)?> = NIOLockedValueBox(nil)
    /// Trusted decisions for default handling (nil when switched off).
    package let evaluationCache: TrustEvaluationCache?
    /// Digest nonces in use per origin.
    let digestSessions = DigestSessionCache()
    /// Per-host decisions (evaluator, pool key, TLS minimum, identity, proxy), made once per host.
    let router: SessionRouter
    /// Logs, metrics and the decision observer.
    private let telemetry: SessionTelemetry
    private let tracing: SessionTracing
    /// With a reloading trust configuration: what follows its swaps (routes, pooled connections, telemetry).
    let trustWatcher: TrustConfigurationWatcher?
    /// Fetches servers' missing intermediates (nil when switched off).
    private let intermediateFetcher: HTTPIntermediateFetcher?
    /// The connection attempts the pool owns, cancelled at shutdown.
    private let attempts = PoolConnectionAttempts()

    /// - Parameters:
    ///   - configuration: Trust, timeouts, redirects…
    ///   - delegate: A `URLSessionDelegate`-shaped challenge answerer; used as the session-level
    ///     handler when the configuration has none.
    ///   - eventLoopGroup: Where connections run (NIO's shared singleton by default).
    public init(
        configuration: TrustHTTPClientConfiguration = TrustHTTPClientConfiguration(), delegate: (any TrustHTTPClientDelegate)? = nil,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        self.configuration = configuration
        self.factory = try ConnectionFactory(configuration: configuration, group: eventLoopGroup)
        self.pool = ConnectionPool(
            configuration: ConnectionPoolStateMachine.Configuration(
                maximumConnectionsPerKey: configuration.maximumConnectionsPerOrigin, maximumIdlePerKey: configuration.maximumIdleConnectionsPerOrigin,
                idleTimeout: TimeAmount(configuration.idleTimeout)),
            group: eventLoopGroup)
        // A trust configuration file can switch the cache off (or make it smaller) for its sessions; a reloading one
        // caches its decisions itself, per configuration put in force.
        var cacheSettings = configuration.evaluationCache
        if let configured = configuration.serverTrust as? any TrustConfigurationEvaluator { cacheSettings = configured.userCacheSettings(cacheSettings) }
        self.evaluationCache = cacheSettings.map(TrustEvaluationCache.init)
        self.telemetry = SessionTelemetry(configuration)
        self.tracing = SessionTracing(configuration)
        // Said once, at a warning: with no system roots, default handling can trust no public server.
        if let logger = configuration.logger, let evaluator = configuration.serverTrust as? DefaultTrustEvaluator,
            evaluator.validator.anchors.includesSystemRoots, let missing = TrustAnchors.system.missingRootsNote
        {
            logger.warning("no system root certificates", metadata: ["trust.note": "\(missing)"])
        }
        // A reporter with nothing to report: only a configuration file's entries name where reports go.
        if let logger = configuration.logger, configuration.pinFailureReporter != nil, !(configuration.serverTrust is any TrustConfigurationEvaluator) {
            logger.warning("pinFailureReporter is set, but serverTrust is not a ConfiguredTrustEvaluator or ReloadingTrustConfiguration: no report is sent")
        }
        let intermediateFetcher = configuration.fetchesMissingIntermediates ? HTTPIntermediateFetcher(resolve: configuration.resolve) : nil
        self.intermediateFetcher = intermediateFetcher
        self.router = SessionRouter(
            configuration: configuration, cache: evaluationCache,
            configuredIdentities: try Self.loadConfiguredIdentities(configuration.serverTrust), telemetry: telemetry,
            intermediateFetcher: intermediateFetcher)
        if let reloading = configuration.serverTrust as? ReloadingTrustConfiguration {
            trustWatcher = TrustConfigurationWatcher(reloading, pool: pool, router: router, telemetry: telemetry)
        } else {
            trustWatcher = nil
        }
        if let delegate {
            delegateHandler.withLockedValue { $0 = DelegateChallengeHandler(delegate: delegate, session: { [weak self] in self }) }
        }
    }

    var sessionHandler: (any ChallengeHandler)? {
        configuration.challengeHandler ?? delegateHandler.withLockedValue { $0 }
    }

    /// Sends `request` and returns the response with its whole body. Redirects are followed
    /// (bounded); the whole exchange, body included, is bounded by the request timeout (and the
    /// resource timeout, when set), each wait for bytes by the read timeout, and the body by
    /// ``ResponseLimits/maximumBodySize`` (or ``TrustHTTPClientRequest/maximumResponseBodySize``): a larger one
    /// fails with ``TrustHTTPClientError/Code/responseTooLarge``. Cancelling the Task cancels the request.
    public func data(for request: TrustHTTPClientRequest) async throws -> TrustHTTPClientResponse {
        try await traced(request) { request, span in
            let context = RequestContext(
                timeout: request.timeout ?? configuration.requestTimeout, resourceTimeout: configuration.resourceTimeout,
                readTimeout: configuration.readTimeout, coversBody: true, span: span)
            let limit = request.maximumResponseBodySize ?? configuration.responseLimits.maximumBodySize
            return try await reportingFailure(of: request) {
                try await context.mapErrors(url: request.url) {
                    try await self.send(request, context: context).collect(limit: limit)
                }
            }
        } status: {
            $0.statusCode
        }
    }

    /// Sends `request` and returns as soon as the response head arrives; the body streams, of any
    /// size, with backpressure. The request timeout bounds the time to the response head; the read
    /// timeout each wait for bytes; the resource timeout, when set, the whole transfer.
    public func bytes(for request: TrustHTTPClientRequest) async throws -> TrustHTTPClientStreamingResponse {
        try await traced(request) { request, span in
            let context = RequestContext(
                timeout: request.timeout ?? configuration.requestTimeout, resourceTimeout: configuration.resourceTimeout,
                readTimeout: configuration.readTimeout, coversBody: false, span: span)
            return try await reportingFailure(of: request) {
                try await context.mapErrors(url: request.url) {
                    try await self.send(request, context: context)
                }
            }
        } status: {
            $0.statusCode
        }
    }

    /// Runs `body` inside the request's span (when a tracer records one), with the span's context as
    /// the task's `ServiceContext` and the trace headers added to the request.
    private func traced<T>(
        _ original: TrustHTTPClientRequest, _ body: (TrustHTTPClientRequest, (any Span)?) async throws -> T, status: (T) -> Int
    ) async throws -> T {
        var request = original
        guard let span = tracing.start(&request) else { return try await body(original, nil) }
        defer { span.end() }
        do {
            let result = try await ServiceContext.$current.withValue(span.context) { try await body(request, span) }
            SessionTracing.finished(status(result), on: span)
            return result
        } catch {
            SessionTracing.failed(error, on: span)
            throw error
        }
    }

    /// Runs `body`; a ``TrustHTTPClientError`` it throws is logged and counted before it is rethrown.
    private func reportingFailure<T>(of request: TrustHTTPClientRequest, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as TrustHTTPClientError {
            telemetry.requestFailed(error, url: request.url)
            throw error
        }
    }

    /// Closes every connection. Requests in flight fail.
    public func shutdown() async {
        trustWatcher?.stop()
        await attempts.cancelAll()
        await pool.shutdown()
        await intermediateFetcher?.shutdown()
    }

    /// Connections currently open (for diagnostics and tests).
    public var openConnectionCount: Int { pool.openConnectionCount }

    // MARK: - Request flow

    /// Sends `original`, answering authentication challenges and following redirects: one send per
    /// ``perform(_:)``, and what follows its response is ``step(after:_:authenticator:)``'s.
    private func send(_ original: TrustHTTPClientRequest, context: RequestContext) async throws -> TrustHTTPClientStreamingResponse {
        var authenticator = HTTPAuthenticator(
            request: original, configuration: configuration, router: router, sessionHandler: sessionHandler, digestSessions: digestSessions)
        var flight = try firstSend(of: original, context: context, authenticator: &authenticator)
        while true {
            let response = try await perform(flight)
            switch try await step(after: response, flight, authenticator: &authenticator) {
            case .send(let next): flight = try nextSend(next, after: flight, redirected: false, authenticator: &authenticator)
            case .redirect(let next): flight = try nextSend(next, after: flight, redirected: true, authenticator: &authenticator)
            case .finish(let final): return final
            }
        }
    }

    private enum Step {
        /// Send this request next.
        case send(TrustHTTPClientRequest)
        /// Send this request next, where the response redirected.
        case redirect(TrustHTTPClientRequest)
        /// The caller's response.
        case finish(TrustHTTPClientStreamingResponse)
    }

    /// What follows `response` to `flight`: the request again without `Expect`, an answer to its challenge, the
    /// redirect's target, or nothing.
    private func step(after response: TrustHTTPClientStreamingResponse, _ flight: InFlightRequest, authenticator: inout HTTPAuthenticator) async throws -> Step
    {
        if response.statusCode == 417, flight.plan.request.waitsForContinue {
            // RFC 9110 §10.1.1: a client that receives 417 to a 100-continue expectation
            // SHOULD repeat the request without it. Its body was never sent.
            response.body.abandon()
            return .send(Self.withoutContinue(flight.unprepared))
        }
        if response.statusCode == 401 || response.statusCode == 407 {
            switch try await authenticator.respond(to: response, request: flight.plan.request, remaining: try flight.context.remaining(url: flight.url)) {
            case .retry(let next):
                return .send(next)
            case .final(let final):
                if let refusal = authenticator.lastRefusal {
                    telemetry.authenticationFailed(space: refusal.space, scheme: refusal.scheme, failures: authenticator.refusals(in: refusal.space))
                }
                return .finish(final)
            }
        }
        try authenticator.succeeded(response, request: flight.plan.request)
        guard let next = try redirect(after: response, flight) else { return .finish(response) }
        // Drain (bounded) so the connection can be reused, then follow.
        _ = try? await response.collect(limit: 1 << 20)
        if flight.redirects.count + 1 > configuration.maximumRedirects { throw tooManyRedirects(flight) }
        return .redirect(next)
    }

    /// The error of a redirect beyond ``TrustHTTPClientConfiguration/maximumRedirects``.
    private func tooManyRedirects(_ flight: InFlightRequest) -> TrustHTTPClientError {
        TrustHTTPClientError(.httpTooManyRedirects, "more than \(configuration.maximumRedirects) redirects", url: flight.original.url)
    }

    /// `request` without `Expect: 100-continue`.
    private static func withoutContinue(_ request: TrustHTTPClientRequest) -> TrustHTTPClientRequest {
        var next = request
        next.expectsContinue = false
        next.removeHeaders(named: [.expect])
        return next
    }

    /// The request `response` redirects `flight` to, when the session follows redirects.
    private func redirect(after response: TrustHTTPClientStreamingResponse, _ flight: InFlightRequest) throws -> TrustHTTPClientRequest? {
        guard configuration.followsRedirects, var next = try Redirects.next(after: response, for: flight.unprepared) else { return nil }
        // Answers the session computed belong to the URL they were computed for (a Digest
        // answer names it); the next one is computed afresh. A caller's own header stays
        // (same origin only: Redirects drops it elsewhere).
        if flight.original.headers[.authorization] == nil { next.removeHeaders(named: [.authorization]) }
        return next
    }

    /// One send on one connection (pooled or new), retried once on a new connection when it never
    /// reached the application; no redirects or authentication here (``send(_:context:)`` does those).
    private func perform(_ flight: InFlightRequest) async throws -> TrustHTTPClientStreamingResponse {
        // One retry, on a new connection, when the request never reached the application: a pooled
        // HTTP/1.1 connection the server closed while idle, or an HTTP/2 stream refused or lost to a
        // server going away before any response (see `Connection.mayRetryHTTP2Request`).
        var avoidsPool = false
        for attempt in 0..<2 {
            var reused = false
            let connection: Connection
            var handshake: HandshakeChallenges?
            switch try await obtainConnection(flight, fromPool: !flight.plan.taskScoped && !avoidsPool) {
            case .pooled(let pooled):
                connection = pooled
                reused = true
            case .connection(let new, let challenges):
                connection = new
                handshake = challenges
            case .proxyAnswer(let answer): return answer
            }
            do {
                return try await exchange(on: connection, flight)
            } catch let error as TrustHTTPClientError {
                // No response, so no body to give the connection back: the pool frees its stream (HTTP/2) or closes it.
                pool.release(connection, reusable: false)
                throw error
            } catch {
                pool.release(connection, reusable: false)
                let recovery = try await recover(from: error, on: connection, handshake: handshake, flight, reused: reused, attempt: attempt)
                // An HTTP/2 connection a request failed on is going away (or gone): neither the retry nor
                // another request takes it again (requests that share a new connection meet this after a GOAWAY).
                if connection.isHTTP2 {
                    pool.retire(connection)
                    avoidsPool = true
                }
                if case .retryOnNewConnection = recovery { avoidsPool = true }
            }
        }
        throw TrustHTTPClientError(.networkConnectionLost, "the connection to \(flight.plan.origin) was lost", url: flight.url)
    }

    private enum Connected {
        /// A connection from the pool (or an HTTP/2 connection another request has just made).
        case pooled(Connection)
        /// A new connection made for this request, with its handshake's challenges (nil for plain HTTP): they
        /// explain a client certificate refused after a TLS 1.3 handshake, when the first exchange fails.
        case connection(Connection, HandshakeChallenges?)
        /// A proxy asked for credentials for the tunnel (407): HTTP authentication takes it from here.
        case proxyAnswer(TrustHTTPClientStreamingResponse)
    }

    /// A pooled connection for the send in progress when `fromPool` allows one, else a new one, made in this
    /// request's task when the pool lets it (``ConnectionPool/connection(for:mayUseHTTP2:deadline:)``: the
    /// per-origin limit, the queue, HTTP/2 sharing) and reported to the pool.
    private func obtainConnection(_ flight: InFlightRequest, fromPool: Bool) async throws -> Connected {
        let id: ConnectionPool.ConnectionID
        switch try await lease(flight, fromPool: fromPool) {
        case .pooled(let connection): return .pooled(connection)
        case .connect(let new): id = new
        }
        // A connection others may share is the pool's to make: this request only waits for it.
        if fromPool { return try await connectForPool(flight, id: id) }
        do {
            // `connect` reports the connection made, or a proxy's refusal, itself.
            return try await connect(flight, id: id)
        } catch {
            // No connection (a spent deadline, a failed handshake, a cancelled task): its place goes to another request.
            pool.failed(id)
            throw error
        }
    }

    /// What the pool gives the send in progress: a connection, or the right to make one — at once, or once the
    /// origin has room (within the request's deadline; a cancelled request stops waiting).
    private func lease(_ flight: InFlightRequest, fromPool: Bool) async throws -> ConnectionPool.Lease {
        do {
            guard fromPool else { return .connect(try pool.newConnection(for: flight.plan.key)) }
            // HTTP/2 is negotiated in the TLS handshake (ALPN): plain HTTP and HTTP/1.1-only sessions never share.
            let mayUseHTTP2 = configuration.httpVersion == .automatic && flight.plan.origin.isSecure
            let deadline = NIODeadline.now() + TimeAmount(try flight.context.remaining(url: flight.url))
            return try await pool.connection(for: flight.plan.key, mayUseHTTP2: mayUseHTTP2, deadline: deadline)
        } catch let failure as ConnectionPoolStateMachine.Failure {
            throw Self.sessionError(failure, flight)
        }
    }

    /// What a request that got no connection from the pool fails with: its request timeout, or cancelled.
    private static func sessionError(_ failure: ConnectionPoolStateMachine.Failure, _ flight: InFlightRequest) -> TrustHTTPClientError {
        switch failure {
        case .timedOut:
            flight.context.markTimedOut()
            return TrustHTTPClientError(.timedOut, flight.context.requestTimedOut, url: flight.url)
        case .cancelled: return TrustHTTPClientError(.cancelled, "the request was cancelled", url: flight.url)
        case .shutDown: return TrustHTTPClientError(.cancelled, "the session was shut down", url: flight.url)
        }
    }

    /// A new shareable connection, an attempt the pool owns (``PoolConnectionAttempt``), made by the event loop (in a
    /// task, only to ask the session's challenge handler): bounded by the connect timeout,
    /// its handshake's challenges (the session's handler, never a request's) answered there. This request waits for it
    /// within its own deadline; one that times out or is cancelled leaves the attempt to the requests queued behind it,
    /// to whom the connection goes when it comes (or whose places open when it fails). Connections of a request with
    /// its own challenge handler, and of a retry that must not reuse one, stay with their request (`connect`).
    private func connectForPool(_ flight: InFlightRequest, id: ConnectionPool.ConnectionID) async throws -> Connected {
        let (specification, remaining): (ConnectionSpecification, Duration)
        do {
            (specification, remaining) = (try connectionSpecification(flight, ownedByPool: true), try flight.context.remaining(url: flight.url))
        } catch {
            pool.failed(id)
            throw error
        }
        let attempt = PoolConnectionAttempt()
        let generation = trustWatcher?.generation
        let (factory, pool, telemetry, origin) = (self.factory, self.pool, self.telemetry, specification.origin)
        let started = ContinuousClock.now
        let end: @Sendable (Result<Connection, any Error>) -> Void = { result in
            switch result {
            case .success(let connection):
                self.connected(connection, id: id, origin: origin, started: started, since: generation)
                // The request gave up: the connection goes to the pool, to the next request queued for the origin.
                if !attempt.finish(result) { pool.release(connection, reusable: true) }
            case .failure:
                telemetry.connected(origin, duration: started.duration(to: .now), failed: true)
                if !attempt.finish(result) { pool.failed(id) }
            }
        }
        if let handshake = specification.handshake, handshake.asksHandlers {
            // The session's challenge handler is asked from a task that answers the handshake's challenges.
            attempts.start {
                do {
                    end(.success(try await HandshakeChallenges.answering(handshake) { try await factory.connect(specification) }))
                } catch {
                    end(.failure(error))
                }
            }
        } else {
            attempts.track(factory.connecting(specification), then: end)
        }
        switch await attempt.wait(timeout: remaining, on: factory.group.next()) {
        case .finished(.success(let connection)):
            return .connection(connection, specification.handshake)
        case .finished(.failure(let error)):
            pool.failed(id)
            if let refusal = error as? ProxyRefusal { return try answer(to: refusal, flight) }
            throw error
        // As a request that gave up waiting in the pool's queue.
        case .timedOut: throw Self.sessionError(.timedOut, flight)
        case .cancelled: throw Self.sessionError(.cancelled, flight)
        }
    }

    /// A new connection for the send in progress, with its challenges (server trust, client certificate).
    private func connect(_ flight: InFlightRequest, id: ConnectionPool.ConnectionID) async throws -> Connected {
        let specification = try connectionSpecification(flight)
        let started = ContinuousClock.now
        let generation = trustWatcher?.generation
        do {
            // The handshake's challenge handlers are answered in this (the request's) task while it connects.
            let connection = try await HandshakeChallenges.answering(specification.handshake) { try await factory.connect(specification) }
            connected(connection, id: id, origin: specification.origin, started: started, since: generation)
            return .connection(connection, specification.handshake)
        } catch {
            return try notConnected(error, id: id, started: started, flight)
        }
    }

    /// A new connection is made: measured, logged, and handed to the pool (and to the trust watcher of a
    /// reloading configuration). Not inlined: its work took room in `connect`'s frame (measured: "Frame sizes" in
    /// RequestFlow.md).
    @inline(never)
    private func connected(
        _ connection: Connection, id: ConnectionPool.ConnectionID, origin: Origin, started: ContinuousClock.Instant, since generation: UInt64?
    ) {
        telemetry.connected(origin, duration: started.duration(to: .now), failed: false)
        pool.created(id, connection)
        if let generation { trustWatcher?.created(connection, since: generation) }
    }

    /// No connection: measured and logged, and a proxy's refusal of CONNECT answered (``answer(to:_:)``); any
    /// other error is thrown. Not inlined, for the same reason as ``connected(_:id:origin:started:since:)``.
    @inline(never)
    private func notConnected(_ error: any Error, id: ConnectionPool.ConnectionID, started: ContinuousClock.Instant, _ flight: InFlightRequest) throws
        -> Connected
    {
        telemetry.connected(flight.plan.origin, duration: started.duration(to: .now), failed: true)
        guard let refusal = error as? ProxyRefusal else { throw error }
        pool.failed(id)
        return try answer(to: refusal, flight)
    }

    /// What the factory needs for a new connection for the send in progress: its handshake's challenges, its
    /// TLS minimum, whether others may share it, and its timeout (the connect timeout, or what is left of the
    /// request's).
    private func connectionSpecification(_ flight: InFlightRequest, ownedByPool: Bool = false) throws -> ConnectionSpecification {
        let (plan, request) = (flight.plan, flight.plan.request)
        // The pool's attempts outlive the request that caused them: the connect timeout alone bounds them. It ends a
        // handler still deciding by cancelling it (no one judged the server: no decision is recorded), so the
        // handlers' own timeout is set past it, where it cannot race it.
        let remaining = ownedByPool ? configuration.connectTimeout : try flight.context.remaining(url: request.url)
        let handlerTimeout = ownedByPool ? configuration.connectTimeout * 2 : remaining
        let timeout = min(configuration.connectTimeout, remaining)
        let handshake = plan.origin.isSecure ? makeHandshake(flight, handlerTimeout: handlerTimeout, deadline: .now + timeout) : nil
        return ConnectionSpecification(
            origin: plan.origin, handshake: handshake, requiresTLS13: plan.route.requiresTLS13, shareable: !plan.taskScoped, timeout: timeout, url: request.url,
            proxy: plan.proxy, proxyAuthorization: request.headers[.proxyAuthorization])
    }

    /// A proxy's refusal of CONNECT: its 407 for HTTP authentication to answer, else the error.
    private func answer(to refusal: ProxyRefusal, _ flight: InFlightRequest) throws -> Connected {
        guard let proxy = flight.plan.proxy else { throw refusal }
        if refusal.statusCode == 407 {
            var answer = TrustHTTPClientStreamingResponse(
                TrustHTTPClientResponse(
                    url: flight.url, statusCode: 407, headers: refusal.headers, httpVersion: .http1_1,
                    redirects: flight.redirects))
            answer.isProxyAnswer = true
            return .proxyAnswer(answer)
        }
        let origin = flight.plan.origin
        throw TrustHTTPClientError(
            .badServerResponse,
            refusal.statusCode == 0
                ? "the proxy \(proxy) closed the tunnel to \(origin.authority) or answered CONNECT with something that is not HTTP"
                : "the proxy \(proxy) refused CONNECT to \(origin.authority) with status \(refusal.statusCode)", url: flight.url)
    }

    /// The challenges of a TLS handshake for the send in progress: server trust (the route's evaluation alone
    /// when no handler is to be asked), and a client certificate when a handler or an identity can answer one.
    private func makeHandshake(_ flight: InFlightRequest, handlerTimeout: Duration, deadline: ContinuousClock.Instant) -> HandshakeChallenges {
        let (plan, taskHandler) = (flight.plan, flight.plan.request.challengeHandler)
        let origin = plan.origin
        let identity = plan.route.clientIdentity
        let serverTrust =
            plan.alone
            ? nil
            : ServerTrustChallenge(
                origin: origin, taskHandler: taskHandler, sessionHandler: sessionHandler, evaluation: plan.route.evaluation, handlerTimeout: handlerTimeout)
        let clientCertificate =
            taskHandler != nil || sessionHandler != nil || identity != nil
            ? ClientCertificateChallenge(
                origin: origin, taskHandler: taskHandler, sessionHandler: sessionHandler, defaultIdentity: identity, handlerTimeout: handlerTimeout)
            : nil
        return HandshakeChallenges(
            origin: origin, url: flight.url, deadline: deadline, evaluation: plan.route.evaluation,
            serverTrust: serverTrust, clientCertificate: clientCertificate)
    }

    /// Sends the request on `connection` and returns once the response head is in; the body streams,
    /// and the connection goes back to the pool when it ends.
    private func exchange(on connection: Connection, _ flight: InFlightRequest) async throws -> TrustHTTPClientStreamingResponse {
        if let span = flight.context.span { SessionTracing.describe(connection, on: span) }
        let (responseHead, exchange) = try await connection.exchange(
            head: flight.plan.head, body: flight.plan.body, continueTimeout: flight.plan.continueTimeout, url: flight.plan.request.url,
            timeouts: try flight.context.exchangeTimeouts(url: flight.plan.request.url), limits: configuration.responseLimits,
            uploadProgress: flight.plan.request.uploadProgress)
        return makeResponse(responseHead, exchange, on: connection, flight)
    }

    /// The response whose head arrived, its body streaming from `exchange`; the connection goes back
    /// to the pool when the body ends.
    private func makeResponse(_ responseHead: HTTPResponseHead, _ exchange: HTTPExchange, on connection: Connection, _ flight: InFlightRequest)
        -> TrustHTTPClientStreamingResponse
    {
        let (plan, url) = (flight.plan, flight.url)
        exchange.returnConnectionWhenEnded(ConnectionReturn(pool: pool, connection: connection))
        let link = ExchangeLink(exchange: exchange, connection: connection, origin: plan.origin, url: url, decompression: configuration.decompression)
        let responseBody = TrustHTTPClientStreamingResponse.Body(stream: exchange.bodyStream, link: link, url: url)
        var response = TrustHTTPClientStreamingResponse(
            url: url, statusCode: Int(responseHead.status.code),
            headers: HTTPFields(responseHead.headers), httpVersion: connection.httpVersion, redirects: flight.redirects,
            tlsVersion: connection.tlsVersion, serverTrust: connection.serverTrust,
            body: responseBody)
        response.bodyless = plan.head.method == .HEAD || response.statusCode == 204 || response.statusCode == 304
        return response
    }

    private enum Recovery {
        /// The pooled connection was closed while idle: again, from the pool or a new connection.
        case retry
        /// The request never reached the application over HTTP/2: again, on a new connection.
        case retryOnNewConnection
    }

    /// What an exchange that failed before its response head means: a retry, or the error to throw.
    private func recover(
        from error: any Error, on connection: Connection, handshake: HandshakeChallenges?, _ flight: InFlightRequest, reused: Bool, attempt: Int
    ) async throws -> Recovery {
        let (origin, url) = (flight.plan.origin, flight.url)
        // A server that broke a limit or a protocol rule is not asked again.
        if let violation = await connection.settledViolation(explaining: error) {
            throw violation.sessionError(origin: origin, url: url)
        }
        if flight.context.timedOut { throw TrustHTTPClientError(.timedOut, flight.context.requestTimedOut, url: url) }
        if Task.isCancelled { throw TrustHTTPClientError(.cancelled, "the request was cancelled", url: url) }
        // TLS 1.3: a server that wanted a (different) client certificate says so after the handshake.
        if let clientError = handshake?.error(after: "\(error) \(connection.errors.text)") {
            throw clientError
        }
        if reused && attempt == 0 && error is ConnectionClosedError { return .retry }
        if attempt == 0 && connection.mayRetryHTTP2Request(after: error, method: flight.plan.request.method) { return .retryOnNewConnection }
        throw TrustHTTPClientError(.networkConnectionLost, "the connection to \(origin) was lost", url: url, underlyingError: error)
    }

    /// The client identities the session's trust configuration names; with a reloading one, those of the
    /// configuration in force, labelled with its generation (read first: never newer than what was loaded).
    static func loadConfiguredIdentities(_ trust: any TrustEvaluator) throws(ClientIdentityError) -> SessionRouter.ConfiguredIdentities {
        guard let configured = trust as? any TrustConfigurationEvaluator else { return SessionRouter.ConfiguredIdentities(generation: 0, identities: [:]) }
        let generation = configured.generation
        return SessionRouter.ConfiguredIdentities(generation: generation, identities: try loadConfiguredIdentities(configured.current))
    }

    /// The client identities `evaluator`'s configuration names, by entry host (the base's under "").
    static func loadConfiguredIdentities(_ evaluator: ConfiguredTrustEvaluator) throws(ClientIdentityError) -> [String: ClientIdentity] {
        var identities: [String: ClientIdentity] = [:]
        let configuration = evaluator.configuration
        for entry in [configuration.base] + configuration.hosts {
            guard let reference = entry.clientIdentity,
                let identity = try ClientIdentity.load(reference, baseDirectory: evaluator.baseDirectory)
            else { continue }
            identities[entry.host?.description ?? ""] = identity
        }
        return identities
    }
}

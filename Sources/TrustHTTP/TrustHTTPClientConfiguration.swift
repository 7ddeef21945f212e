import CoreMetrics
import Logging
import Tracing
import Trust
import TrustNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which HTTP versions a session offers over ALPN.
public enum HTTPVersionPreference: Sendable, Hashable {
    /// HTTP/2 when the server offers it, else HTTP/1.1.
    case automatic
    /// HTTP/1.1 only.
    case http1Only
}

/// Everything a ``TrustHTTPClient`` is configured with. Values; secure defaults.
public struct TrustHTTPClientConfiguration: Sendable {
    /// The default ``serverTrust``, made once: its anchor index is built when it is made.
    private static let systemTrust = DefaultTrustEvaluator()

    /// How servers are trusted: any `TrustEvaluator`. By default a `DefaultTrustEvaluator` — system roots, Web-PKI
    /// rules, host name checked. Others: `PublicKeysTrustEvaluator` (pins), `SecurityPolicy` (AFNetworking's
    /// semantics), `PerHostTrustEvaluator` (one per host), and a configuration file — `ConfiguredTrustEvaluator`, or
    /// `ReloadingTrustConfiguration` to follow the file without a restart. With either of those two (as the server
    /// trust itself, not inside another evaluator) the session applies the whole entry of each host: its TLS minimum
    /// and client identity on the connection, its pin-failure reports sent through ``pinFailureReporter``; with a
    /// reloading one, a request that starts after a swap is sent on a connection made under the new configuration (connections made
    /// before lend no more requests: closed now when idle, after the requests in flight on them otherwise).
    public var serverTrust: any TrustEvaluator = Self.systemTrust
    /// Where the pin-failure reports of a configuration file's entries (`reportURIs`) are sent from; `nil` (the
    /// default): none are sent.
    public var pinFailureReporter: PinFailureReporter?
    /// The lowest TLS version accepted (TLS 1.2 by default).
    public var minimumTLSVersion: TLSMinimum = .tls12
    /// Which HTTP versions are offered over ALPN.
    public var httpVersion: HTTPVersionPreference = .automatic
    /// Time to establish a connection (TCP and TLS).
    public var connectTimeout: Duration = .seconds(10)
    /// Time for a whole request, redirects and challenges included: with ``TrustHTTPClient/data(for:)``
    /// until the body has been read, with ``TrustHTTPClient/bytes(for:)`` until the response head.
    public var requestTimeout: Duration = .seconds(60)
    /// The longest wait for the next bytes of a response (head or body) while the reader wants
    /// them — URLSession's `timeoutIntervalForRequest`. A server that trickles keeps a request
    /// alive only within ``requestTimeout``; a stalled streamed body fails here. Time the reader
    /// itself spends behind (backpressure) does not count. `nil`: no read timeout.
    public var readTimeout: Duration? = .seconds(60)
    /// A deadline for the whole transfer that also covers a streamed body
    /// (``TrustHTTPClient/bytes(for:)``) — URLSession's `timeoutIntervalForResource`. `nil` (the default):
    /// a streamed body is bounded by ``readTimeout`` only.
    public var resourceTimeout: Duration?
    /// How long a request that expects `100 Continue` (``TrustHTTPClientRequest/expectsContinue``) holds its body
    /// back before sending it without an answer (RFC 9110 §10.1.1); curl's `--expect100-timeout`,
    /// 1 second by default as there.
    public var continueTimeout: Duration = .seconds(1)
    /// Bounds on what a server may send (body collected, head size, header fields, 1xx responses).
    public var responseLimits = ResponseLimits()
    /// Whether responses are requested compressed and delivered decompressed (gzip, deflate), and how
    /// far a body may inflate: ``ResponseDecompression/disabled`` by default.
    public var decompression = ResponseDecompression.disabled
    /// How long an idle pooled connection is kept.
    public var idleTimeout: Duration = .seconds(60)
    /// Redirects followed before failing with `httpTooManyRedirects` (0: none followed).
    public var maximumRedirects: Int = 10
    /// Whether redirects are followed at all.
    public var followsRedirects: Bool = true
    /// Idle HTTP/1.1 connections kept per origin.
    public var maximumIdleConnectionsPerOrigin: Int = 6
    /// Connections per origin (and trust configuration), open or being made: 6 by default, as URLSession's
    /// `httpMaximumConnectionsPerHost`. Requests beyond them wait, in order, for a connection to come free —
    /// each within its own request timeout, and a cancelled one stops waiting. An HTTP/2 connection carries as
    /// many requests at once as the server's `SETTINGS_MAX_CONCURRENT_STREAMS` allows (RFC 9113 §6.5.2); a
    /// second one is made only when it is full. A request with its own challenge handler has a connection of
    /// its own, as does a retry of a request that never reached the server; neither waits. Values below 1 are
    /// read as 1.
    public var maximumConnectionsPerOrigin: Int = 6 {
        didSet { maximumConnectionsPerOrigin = max(1, maximumConnectionsPerOrigin) }
    }
    /// Connect to another address for a host, like curl's `--resolve host:port:address`:
    /// keys are `host:port` (or `host` for every port), values IP addresses. TLS still checks `host`.
    public var resolve: [String: String] = [:]
    /// Reuse of trusted decisions for new connections presenting the identical chain for the same
    /// host under the same trust configuration (see `TrustEvaluationCache` for its safety rules);
    /// `nil` evaluates every chain from scratch. Challenge handlers are asked for every new
    /// connection either way: the cache only speeds up default handling. With a configuration file as
    /// ``serverTrust``, the file's `evaluationCache` applies too: `false` there switches it off, and the stricter
    /// capacity and lifetime win (a `ReloadingTrustConfiguration` caches each configuration's decisions itself).
    public var evaluationCache: EvaluationCacheSettings? = EvaluationCacheSettings()
    /// Whether a server's missing intermediates are fetched, as Apple platforms, Chrome and Windows fetch them: when a
    /// chain stops at a certificate whose issuer was neither presented nor an anchor, the issuer is fetched from that
    /// certificate's Authority Information Access `caIssuers` location (plain `http` only; through the request's
    /// proxy when it has one, never direct) and the evaluator judges the completed path — pins, CT and revocation
    /// included; a fetched certificate is never an anchor. Nothing is fetched for a chain that validates as presented.
    /// Bounded (4 fetches, 3 levels, 64 KiB each, 4 s per evaluation) and cached as HTTP caching allows. The
    /// decision's notes say what was fetched from where. A fetch tells the CA's server, in clear text, that some
    /// client is checking one of its certificates; `false` refuses such servers instead (curl's and OpenSSL's
    /// behaviour). On by default.
    public var fetchesMissingIntermediates: Bool = true
    /// The bounds on fetching missing intermediates in one evaluation.
    package var intermediateFetchLimits = IntermediateFetchingEvaluator.Limits()
    /// Client identities by host (canonical name or IP literal), sent when a server asks for a
    /// certificate and the client-certificate challenge gets default handling.
    public var clientIdentities: [String: ClientIdentity] = [:]
    /// The identity for hosts not in ``clientIdentities``; `nil` sends none.
    public var defaultClientIdentity: ClientIdentity?
    /// Client identities that follow their files (`ReloadingClientIdentity`), by host (canonical name or IP
    /// literal); for a host here, this wins over ``clientIdentities``. Each new connection presents the identity in
    /// force when it is made; open connections keep theirs, and pooled ones made with an earlier identity are no
    /// longer given to requests (they close when their idle time is up).
    public var reloadingClientIdentities: [String: ReloadingClientIdentity] = [:]
    /// The reloading identity for hosts in neither map nor a trust configuration entry with a `clientIdentity`;
    /// wins over ``defaultClientIdentity``.
    public var defaultReloadingClientIdentity: ReloadingClientIdentity?
    /// The session-level challenge handler.
    public var challengeHandler: (any ChallengeHandler)?
    /// Sent as `User-Agent` unless the request has one.
    public var userAgent: String = "swift-trust"
    /// Where HTTP-authentication credentials are looked up (default handling, `proposedCredential`)
    /// and where credentials that worked are kept (per their persistence). In memory by default;
    /// `try CredentialStore.persistent()` keeps permanent ones in a file. `nil`: no store.
    public var credentialStore: CredentialStore? = CredentialStore()
    /// The HTTP authentication schemes answered (the strongest offered is chosen).
    public var authenticationSchemes: HTTPAuthenticationSchemes = .any
    /// Whether Basic credentials may be sent over plain `http` (clear text). Off by default:
    /// a Basic challenge from an `http` origin then fails with `userAuthenticationRequired`.
    /// Digest never sends the password and is answered over `http`.
    public var allowsCredentialsOverHTTP: Bool = false
    /// The HTTP proxy for every request (`http` in absolute form, `https` through `CONNECT`).
    public var proxy: ProxyConfiguration?
    /// When ``proxy`` is nil: use the process's proxy variables as curl reads them (`http_proxy`, never
    /// `HTTP_PROXY`; `https_proxy`/`HTTPS_PROXY`; `all_proxy`/`ALL_PROXY`; `no_proxy`/`NO_PROXY`: see
    /// ``ProxyEnvironment``), as they are when the session is created. A setting that cannot be used fails
    /// the requests it applies to (``ProxyEnvironment/UnusableProxy``), never sends them direct. Off by default.
    public var usesEnvironmentProxies: Bool = false
    /// When ``proxy`` is nil: the proxy for each request's scheme and host, with its exceptions (settings read
    /// from variables other than the process's, or curl's `-x` with `--noproxy`); wins over
    /// ``usesEnvironmentProxies``.
    public var proxyEnvironment: ProxyEnvironment?
    /// How many times a protection space may refuse a credential before the 401/407 is returned
    /// (1: the handler sees `previousFailureCount` 0, then 1, then the response is final).
    public var maximumAuthenticationFailures: Int = 1

    /// Where the session logs its decisions, refusals and failures (see `SessionTelemetry` for the
    /// levels and metadata keys); `nil` (the default): no log lines. Nothing logged carries a secret.
    public var logger: Logger?
    /// Where the session's metrics go; `nil` (the default): the factory the application bootstrapped
    /// with `MetricsSystem.bootstrap` (none: nothing is recorded).
    public var metricsFactory: (any MetricsFactory)?
    /// Where the session's spans go (one per request, see `SessionTracing` for the attributes); `nil`
    /// (the default): the tracer the application bootstrapped with `InstrumentationSystem.bootstrap`
    /// (none: no spans, no trace headers).
    public var tracer: (any Tracer)?
    /// Receives every server-trust decision default handling makes (host, decision with the presented
    /// chain, cached or not), on the connection's task: keep it quick.
    public var decisionObserver: (@Sendable (TrustDecisionEvent) -> Void)?
    /// Receives every swap and refusal of the `ReloadingTrustConfiguration` in ``serverTrust``, as
    /// the session logs and counts them (a change of configuration is not a handshake's decision: it does not go
    /// to ``decisionObserver``, whose events each carry one). Called on the thread that offered the configuration.
    public var trustConfigurationObserver: (@Sendable (ReloadingTrustConfiguration.Event) -> Void)?

    /// A configuration with the defaults.
    public init() {}
}

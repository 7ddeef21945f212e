import NIOConcurrencyHelpers
import Trust
import TrustNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a session decides per host, decided once: the evaluator (with the evaluation cache around it), the
/// key connections are pooled by, whether the host's trust configuration entry asks for TLS 1.3, the client
/// identity offered by default, and the proxy.
///
/// Built with the session (its configuration is fixed): the environment's proxies are read here, once; the
/// evaluator is the configuration's own, made by the caller; each host's route is made on its first request and
/// kept (up to ``capacity`` hosts), so nothing on the request path builds an evaluator, a validator or an
/// anchor index, or reads the environment.
final class SessionRouter: Sendable {
    /// One host's decisions: made once, shared by reference by every request to the host (its
    /// client identity alone is hundreds of bytes, which a value would copy into each request's plan).
    final class Route: Sendable {
        /// Names the evaluator within the session — with a reloading trust configuration, the generation the route
        /// was made under (and that of the identities it took), and with a reloading identity, the identity's
        /// generation: connections are pooled by it, so that a connection made under a configuration or with an
        /// identity since replaced is given to no new request.
        var key: String {
            guard let reloadingIdentity else { return trustKey }
            return trustKey + "#identity-\(reloadingIdentity.generation)"
        }
        /// With a reloading trust configuration: the generation in force when the route was made (read before
        /// anything else, so a route never claims a newer generation than what it was made from) and the
        /// generation of the configured identities it took. A route is given out only while both are current.
        let generation: UInt64?
        let identitiesGeneration: UInt64?
        private let trustKey: String
        /// Names the evaluator within the session: decisions are cached under it.
        let evaluatorKey: String
        /// The host's one evaluation entry point (a decision without suspending when one is known, else the
        /// evaluation), with its diagnostics hook.
        let evaluation: RouteEvaluation
        /// The host's trust configuration entry asks for TLS 1.3.
        let requiresTLS13: Bool
        /// Offered when the server asks for a certificate and the challenge gets default handling: the
        /// reloading identity's in force when the connection is made, else the fixed one.
        var clientIdentity: ClientIdentity? { reloadingIdentity?.current ?? fixedIdentity }
        private let fixedIdentity: ClientIdentity?
        private let reloadingIdentity: ReloadingClientIdentity?

        init(
            key: String, evaluation: RouteEvaluation, requiresTLS13: Bool, clientIdentity: ClientIdentity?, reloading: ReloadingClientIdentity? = nil,
            generation: UInt64? = nil, identitiesGeneration: UInt64? = nil
        ) {
            self.evaluatorKey = key
            self.generation = generation
            self.identitiesGeneration = identitiesGeneration
            if let generation, let identitiesGeneration {
                trustKey = key + "#trust-\(generation)-\(identitiesGeneration)"
            } else {
                trustKey = key
            }
            self.evaluation = evaluation
            self.requiresTLS13 = requiresTLS13
            self.fixedIdentity = clientIdentity
            self.reloadingIdentity = reloading
        }
    }

    /// Hosts whose routes are kept; beyond it the table starts again (a session talking to more hosts
    /// than this pays the route of a host again, never a wrong one).
    static let capacity = 4096

    private let configuration: TrustHTTPClientConfiguration
    private let cache: TrustEvaluationCache?
    /// The client identities the trust configuration names, by entry host; with a reloading configuration, loaded
    /// again after each swap (``configurationSwapped(to:evaluator:)``), labelled with the generation they follow.
    private let configuredIdentities: NIOLockedValueBox<ConfiguredIdentities>
    /// The session's evaluator as a configuration file's, when it is one: each host's entry gives its route a TLS
    /// minimum and a client identity, and routes follow its generation.
    private let configured: (any TrustConfigurationEvaluator)?

    /// The client identities a trust configuration names, by entry host (the base's under ""), with the
    /// generation of the configuration they were loaded for (1 for a fixed configuration; 0 with no configuration
    /// file, when there are none).
    struct ConfiguredIdentities: Sendable {
        var generation: UInt64
        var identities: [String: ClientIdentity]
    }
    /// The configuration's ``ProxyEnvironment``, or the process's proxy variables, read once when the
    /// configuration uses them; nil with a ``TrustHTTPClientConfiguration/proxy`` (or none at all).
    private let environmentProxies: ProxyEnvironment?
    private let routes = NIOLockedValueBox<[RouteKey: Route]>([:])

    /// A route's host and port (a struct, not an interpolated string: no allocation per request).
    private struct RouteKey: Hashable {
        var host: String
        var port: Int
    }
    /// Where each decision is logged, counted and observed.
    private let telemetry: SessionTelemetry
    /// Fetches missing intermediates for every route (``TrustHTTPClientConfiguration/fetchesMissingIntermediates``).
    private let intermediateFetcher: HTTPIntermediateFetcher?

    init(
        configuration: TrustHTTPClientConfiguration, cache: TrustEvaluationCache?, configuredIdentities: ConfiguredIdentities, telemetry: SessionTelemetry,
        intermediateFetcher: HTTPIntermediateFetcher? = nil
    ) {
        self.configuration = configuration
        self.intermediateFetcher = intermediateFetcher
        self.telemetry = telemetry
        self.cache = cache
        self.configuredIdentities = NIOLockedValueBox(configuredIdentities)
        self.configured = configuration.serverTrust as? any TrustConfigurationEvaluator
        environmentProxies =
            configuration.proxy != nil
            ? nil
            : configuration.proxyEnvironment ?? (configuration.usesEnvironmentProxies ? ProxyEnvironment() : nil)
    }

    /// The route for `origin`, made on the first request to its host and port — and, with a trust configuration
    /// that reloads, again on the first request after each swap: a route made under an earlier generation (even
    /// one stored after the swap by a request that looked it up before) is a miss.
    func route(for origin: Origin) -> Route {
        let name = RouteKey(host: origin.host, port: origin.port)
        let generation = configured?.generation
        if let route = routes.withLockedValue({ $0[name] }), route.generation == generation, route.identitiesGeneration == generation {
            return route
        }
        let route = makeRoute(for: origin, generation: generation)
        routes.withLockedValue { routes in
            if routes.count >= Self.capacity { routes.removeAll(keepingCapacity: true) }
            routes[name] = route
        }
        return route
    }

    /// Loads the client identities `evaluator` (generation `generation`, just put in force) names. When one
    /// cannot be loaded, the identities loaded before stay (labelled with `generation`, so routes follow the
    /// swap) and the error is returned, to report.
    func configurationSwapped(to generation: UInt64, evaluator: ConfiguredTrustEvaluator) -> ClientIdentityError? {
        guard configuredIdentities.withLockedValue({ $0.generation < generation }) else { return nil }
        var failure: ClientIdentityError?
        let loaded: [String: ClientIdentity]?
        do {
            loaded = try TrustHTTPClient.loadConfiguredIdentities(evaluator)
        } catch {
            loaded = nil
            failure = error
        }
        configuredIdentities.withLockedValue { current in
            guard current.generation < generation else { return }
            current = ConfiguredIdentities(generation: generation, identities: loaded ?? current.identities)
        }
        return failure
    }

    /// The generation the configured identities follow.
    var identitiesGeneration: UInt64 { configuredIdentities.withLockedValue { $0.generation } }

    /// The proxy for a request to `origin`, if any (nil, too, when the setting that applies cannot be used:
    /// ``proxyOrFailure(for:url:)`` has failed that request before it connected).
    func proxy(for origin: Origin) -> ProxyConfiguration? {
        try? proxyOrFailure(for: origin, url: nil)
    }

    /// The proxy for a request to `origin`, if any; a proxy setting that applies and cannot be used (a scheme
    /// other than http, a malformed URL or port) fails the request, which never goes direct instead.
    func proxyOrFailure(for origin: Origin, url: URL?) throws(TrustHTTPClientError) -> ProxyConfiguration? {
        let chosen: ProxyConfiguration?
        if let proxy = configuration.proxy {
            chosen = proxy.applies(toHost: origin.host, port: origin.port) ? proxy : nil
        } else if let environmentProxies {
            do {
                chosen = try environmentProxies.proxy(scheme: origin.scheme, host: origin.host, port: origin.port)
            } catch {
                throw TrustHTTPClientError(.cannotConnectToHost, "\(error); the request is not sent direct instead", url: url, underlyingError: error)
            }
        } else {
            return nil
        }
        // A port set in code (``ProxyConfiguration/init(host:port:credential:noProxy:)``) is checked here.
        if let chosen, !(1...65_535).contains(chosen.port) {
            let problem = ProxyEnvironment.UnusableProxy(source: "the configuration", problem: .malformed("\(chosen.host):\(chosen.port)"))
            throw TrustHTTPClientError(.cannotConnectToHost, "\(problem); the request is not sent direct instead", url: url, underlyingError: problem)
        }
        return chosen
    }

    private func makeRoute(for origin: Origin, generation: UInt64?) -> Route {
        let evaluator = configuration.serverTrust
        // Missing intermediates fetched through the proxy this route's requests use, never direct when they do not.
        var fetching: IntermediateFetchingEvaluator?
        if origin.isSecure, let intermediateFetcher {
            fetching = IntermediateFetchingEvaluator(
                evaluator, fetcher: intermediateFetcher.through(proxy(for: origin)), limits: configuration.intermediateFetchLimits)
        }
        let entry = configured?.current.entry(for: origin.host)
        let loaded = configuredIdentities.withLockedValue { $0 }
        let (identity, reloadingIdentity) = identities(for: origin.host, entry: entry, configured: loaded.identities)
        // Decisions are cached under the generation they were made under (the cache keys them by chain and name too).
        let key = generation.map { "configuration-\($0)" } ?? "evaluator"
        let evaluation = RouteEvaluation(
            evaluator: evaluator, configured: configured, fetching: fetching, reporter: configuration.pinFailureReporter, cache: cache,
            key: key, telemetry: telemetry, origin: origin)
        return Route(
            key: key, evaluation: evaluation, requiresTLS13: origin.isSecure && entry?.minimumTLSVersion == .tls13, clientIdentity: identity,
            reloading: reloadingIdentity, generation: generation, identitiesGeneration: generation == nil ? nil : loaded.generation)
    }

    /// The host's client identity, the most specific first: a reloading one for the host, a fixed one for the host,
    /// the trust configuration entry's, the default reloading one, the default fixed one.
    private func identities(
        for host: String, entry: TrustConfiguration.Entry?, configured: [String: ClientIdentity]
    ) -> (ClientIdentity?, ReloadingClientIdentity?) {
        if let reloading = configuration.reloadingClientIdentities[host] { return (nil, reloading) }
        if let identity = configuration.clientIdentities[host] ?? entry.flatMap({ configured[$0.host?.description ?? ""] }) {
            return (identity, nil)
        }
        if let reloading = configuration.defaultReloadingClientIdentity { return (nil, reloading) }
        return (configuration.defaultClientIdentity, nil)
    }
}

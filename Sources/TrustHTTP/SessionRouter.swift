import Foundation
import NIOConcurrencyHelpers
import Trust
import TrustNIO

/// What a session decides per host, decided once: the evaluator (with the evaluation cache around it), the
/// key connections are pooled by, whether the host's trust configuration entry asks for TLS 1.3, the client
/// identity offered by default, and the proxy.
///
/// Built with the session (its configuration is fixed): the default evaluator, the canonical per-host map
/// and the environment's proxies are made here, once; each host's route is made on its first request and
/// kept (up to ``capacity`` hosts), so nothing on the request path builds an evaluator, a validator or an
/// anchor index, canonicalises a host pattern, or reads the environment.
final class SessionRouter: Sendable {
    /// One host's decisions: made once, shared by reference by every request to the host (its
    /// client identity alone is hundreds of bytes, which a value would copy into each request's plan).
    final class Route: Sendable {
        /// Names the evaluator within the session — and, with a reloading identity, the identity's generation:
        /// connections are pooled by it, so that a connection made with an identity since replaced is given to no
        /// new request.
        var key: String {
            guard let reloadingIdentity else { return evaluatorKey }
            return evaluatorKey + "#identity-\(reloadingIdentity.generation)"
        }
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

        init(key: String, evaluation: RouteEvaluation, requiresTLS13: Bool, clientIdentity: ClientIdentity?, reloading: ReloadingClientIdentity? = nil) {
            self.evaluatorKey = key
            self.evaluation = evaluation
            self.requiresTLS13 = requiresTLS13
            self.fixedIdentity = clientIdentity
            self.reloadingIdentity = reloading
        }
    }

    /// Hosts whose routes are kept; beyond it the table starts again (a session talking to more hosts
    /// than this pays the route of a host again, never a wrong one).
    static let capacity = 4096

    private let configuration: SessionConfiguration
    private let cache: TrustEvaluationCache?
    private let configuredIdentities: [String: ClientIdentity]
    /// `.systemDefault`'s evaluator, shared by every host.
    private let defaultEvaluator: DefaultTrustEvaluator?
    /// `.perHost`'s map with canonical keys.
    private let perHost: [String: any TrustEvaluator]
    /// The configuration's ``ProxyEnvironment``, or the process's proxy variables, read once when the
    /// configuration uses them; nil with a ``SessionConfiguration/proxy`` (or none at all).
    private let environmentProxies: ProxyEnvironment?
    private let routes = NIOLockedValueBox<[RouteKey: Route]>([:])

    /// A route's host and port (a struct, not an interpolated string: no allocation per request).
    private struct RouteKey: Hashable {
        var host: String
        var port: Int
    }
    /// Where each decision is logged, counted and observed.
    private let telemetry: SessionTelemetry

    init(configuration: SessionConfiguration, cache: TrustEvaluationCache?, configuredIdentities: [String: ClientIdentity], telemetry: SessionTelemetry) {
        self.configuration = configuration
        self.telemetry = telemetry
        self.cache = cache
        self.configuredIdentities = configuredIdentities
        if case .systemDefault = configuration.serverTrust { defaultEvaluator = DefaultTrustEvaluator() } else { defaultEvaluator = nil }
        if case .perHost(let evaluators, _) = configuration.serverTrust {
            var canonical: [String: any TrustEvaluator] = [:]
            for (pattern, evaluator) in evaluators { canonical[Self.canonical(pattern)] = evaluator }
            perHost = canonical
        } else {
            perHost = [:]
        }
        environmentProxies =
            configuration.proxy != nil
            ? nil
            : configuration.proxyEnvironment ?? (configuration.usesEnvironmentProxies ? ProxyEnvironment() : nil)
    }

    /// The route for `origin`, made on the first request to its host and port.
    func route(for origin: Origin) -> Route {
        let name = RouteKey(host: origin.host, port: origin.port)
        if let route = routes.withLockedValue({ $0[name] }) { return route }
        let route = makeRoute(for: origin)
        routes.withLockedValue { routes in
            if routes.count >= Self.capacity { routes.removeAll(keepingCapacity: true) }
            routes[name] = route
        }
        return route
    }

    /// Forgets every route (the trust configuration in force changed: entries, TLS minimums): made again on each
    /// host's next request.
    func forgetRoutes() {
        routes.withLockedValue { $0.removeAll() }
    }

    /// The proxy for a request to `origin`, if any (nil, too, when the setting that applies cannot be used:
    /// ``proxyOrFailure(for:url:)`` has failed that request before it connected).
    func proxy(for origin: Origin) -> ProxyConfiguration? {
        try? proxyOrFailure(for: origin, url: nil)
    }

    /// The proxy for a request to `origin`, if any; a proxy setting that applies and cannot be used (a scheme
    /// other than http, a malformed URL or port) fails the request, which never goes direct instead.
    func proxyOrFailure(for origin: Origin, url: URL?) throws(SessionError) -> ProxyConfiguration? {
        let chosen: ProxyConfiguration?
        if let proxy = configuration.proxy {
            chosen = proxy.applies(toHost: origin.host, port: origin.port) ? proxy : nil
        } else if let environmentProxies {
            do {
                chosen = try environmentProxies.proxy(scheme: origin.scheme, host: origin.host, port: origin.port)
            } catch {
                throw SessionError(.cannotConnectToHost, "\(error); the request is not sent direct instead", url: url, underlyingError: error)
            }
        } else {
            return nil
        }
        // A port set in code (``ProxyConfiguration/init(host:port:credential:noProxy:)``) is checked here.
        if let chosen, !(1...65_535).contains(chosen.port) {
            let problem = ProxyEnvironment.UnusableProxy(source: "the configuration", problem: .malformed("\(chosen.host):\(chosen.port)"))
            throw SessionError(.cannotConnectToHost, "\(problem); the request is not sent direct instead", url: url, underlyingError: problem)
        }
        return chosen
    }

    private func makeRoute(for origin: Origin) -> Route {
        let evaluator = evaluator(for: origin)
        var entry: TrustConfiguration.Entry?
        if case .configuration(let evaluator, _) = configuration.serverTrust { entry = evaluator.entry(for: origin.host) }
        if case .reloading(let reloading, _) = configuration.serverTrust { entry = reloading.current.entry(for: origin.host) }
        let (identity, reloading) = identities(for: origin.host, entry: entry)
        let evaluation = RouteEvaluation(
            evaluate: evaluator.evaluate, afterImmediateMiss: evaluator.afterImmediateMiss, immediate: evaluator.immediate, cache: cache,
            key: evaluator.key, telemetry: telemetry, origin: origin)
        return Route(
            key: evaluator.key, evaluation: evaluation, requiresTLS13: origin.isSecure && entry?.minimumTLSVersion == .tls13, clientIdentity: identity,
            reloading: reloading)
    }

    /// The host's client identity, the most specific first: a reloading one for the host, a fixed one for the host,
    /// the trust configuration entry's, the default reloading one, the default fixed one.
    private func identities(for host: String, entry: TrustConfiguration.Entry?) -> (ClientIdentity?, ReloadingClientIdentity?) {
        if let reloading = configuration.reloadingClientIdentities[host] { return (nil, reloading) }
        if let identity = configuration.clientIdentities[host] ?? entry.flatMap({ configuredIdentities[$0.host?.description ?? ""] }) {
            return (identity, nil)
        }
        if let reloading = configuration.defaultReloadingClientIdentity { return (nil, reloading) }
        return (configuration.defaultClientIdentity, nil)
    }

    /// A host's evaluator as a route uses it: a key naming it uniquely within this session's configuration,
    /// its evaluation (and the same after `TrustEvaluator.decisionWithoutSuspending` had no answer), and its
    /// decisions without suspending where it has them.
    private struct HostEvaluator {
        let key: String
        let evaluate: RouteEvaluation.Evaluate
        let afterImmediateMiss: RouteEvaluation.Evaluate
        let immediate: RouteEvaluation.Immediate?

        init(_ key: String, _ evaluator: any TrustEvaluator) {
            self.key = key
            evaluate = { await evaluator.evaluate($0) }
            afterImmediateMiss = { await evaluator.evaluate(afterImmediateMiss: $0) }
            immediate = { evaluator.decisionWithoutSuspending($0) }
        }

        init(_ key: String, immediate: RouteEvaluation.Immediate? = nil, evaluate: @escaping RouteEvaluation.Evaluate) {
            self.key = key
            self.evaluate = evaluate
            afterImmediateMiss = evaluate
            self.immediate = immediate
        }
    }

    /// The evaluator for `origin`.
    private func evaluator(for origin: Origin) -> HostEvaluator {
        switch configuration.serverTrust {
        case .configuration(let evaluator, let reporter):
            let port = origin.port
            return HostEvaluator("configuration", evaluate: reporting(to: reporter, origin) { await evaluator.evaluation(for: $0, port: port) })
        case .reloading(let reloading, let reporter):
            // Its decisions are cached by the configuration in force, never across a swap (`ReloadingTrustConfiguration`).
            let port = origin.port
            return HostEvaluator(
                "reloading", immediate: { reloading.decisionWithoutSuspending($0) },
                evaluate: reporting(to: reporter, origin) { await reloading.evaluation(for: $0, port: port).evaluation })
        case .systemDefault:
            return HostEvaluator("system", defaultEvaluator ?? DefaultTrustEvaluator())
        case .evaluator(let evaluator):
            return HostEvaluator("evaluator", evaluator)
        case .securityPolicy(let policy):
            return HostEvaluator("security-policy") { await policy.evaluate($0) }
        case .perHost(_, let otherHosts):
            let canonical = Self.canonical(origin.host)
            if let evaluator = perHost[canonical] { return HostEvaluator("host:" + canonical, evaluator) }
            return HostEvaluator("other-hosts", otherHosts)
        }
    }

    /// A configuration's evaluation as a route's: its decision, its pin-failure report (if any) sent through `reporter`.
    private func reporting(
        to reporter: PinFailureReporter?, _ origin: Origin, _ evaluation: @escaping @Sendable (ServerTrust) async -> ConfiguredTrustEvaluator.Evaluation
    ) -> RouteEvaluation.Evaluate {
        let telemetry = self.telemetry
        return { trust in
            let evaluation = await evaluation(trust)
            if let report = evaluation.report, let reporter {
                telemetry.reportSubmitted(reporter.enqueue(report, to: evaluation.reportURIs), host: origin.host, to: evaluation.reportURIs)
            }
            return evaluation.decision
        }
    }

    private static func canonical(_ host: String) -> String {
        (try? PeerName(host: host))?.description ?? host.lowercased()
    }
}

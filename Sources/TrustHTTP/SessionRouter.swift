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
        /// Names the evaluator within the session: connections are pooled by it, decisions cached under it.
        let key: String
        /// The evaluation for default handling when a challenge handler may answer first: the cache
        /// consulted and filled around the evaluator.
        let evaluate: TrustEvaluatorFunction
        /// With no handler to ask: a cached decision, given in the handshake itself…
        let known: ServerTrustVerifier.Known?
        /// …and on a miss the evaluation, which only stores (the cache was just asked).
        let evaluateAlone: TrustEvaluatorFunction
        /// The host's trust configuration entry asks for TLS 1.3.
        let requiresTLS13: Bool
        /// Offered when the server asks for a certificate and the challenge gets default handling.
        let clientIdentity: ClientIdentity?

        init(key: String, evaluate: @escaping TrustEvaluatorFunction, known: ServerTrustVerifier.Known?, evaluateAlone: @escaping TrustEvaluatorFunction,
             requiresTLS13: Bool, clientIdentity: ClientIdentity?) {
            self.key = key
            self.evaluate = evaluate
            self.known = known
            self.evaluateAlone = evaluateAlone
            self.requiresTLS13 = requiresTLS13
            self.clientIdentity = clientIdentity
        }
    }

    typealias TrustEvaluatorFunction = @Sendable (ServerTrust) async -> TrustDecision

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
        environmentProxies = configuration.proxy != nil ? nil
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
        let (key, evaluate, immediate) = evaluator(for: origin)
        var entry: TrustConfiguration.Entry?
        if case .configuration(let evaluator, _) = configuration.serverTrust { entry = evaluator.entry(for: origin.host) }
        let identity = configuration.clientIdentities[origin.host]
            ?? entry.flatMap { configuredIdentities[$0.host?.description ?? ""] } ?? configuration.defaultClientIdentity
        let observed = ObservedEvaluation(evaluate: evaluate, immediate: immediate, telemetry: telemetry, origin: origin)
        let functions = cache.map { observed.cached(in: $0, policy: key) } ?? observed.uncached
        return Route(
            key: key, evaluate: functions.evaluate, known: functions.known, evaluateAlone: functions.evaluateAlone,
            requiresTLS13: origin.isSecure && entry?.minimumTLSVersion == .tls13, clientIdentity: identity)
    }

    /// One host's evaluator with each decision observed (logged, counted, timed: ``SessionTelemetry``), made
    /// into a route's three functions, with or without the evaluation cache around them.
    private struct ObservedEvaluation: Sendable {
        typealias Functions = (evaluate: TrustEvaluatorFunction, known: ServerTrustVerifier.Known?, evaluateAlone: TrustEvaluatorFunction)

        let evaluate: TrustEvaluatorFunction
        /// The evaluator's decision without suspending (its direct path), where it has one.
        let immediate: ServerTrustVerifier.Known?
        let telemetry: SessionTelemetry
        let origin: Origin

        private func observe(_ decision: TrustDecision, cached: Bool, _ duration: Duration) {
            telemetry.decided(decision, host: origin.host, port: origin.port, cached: cached, duration: duration)
        }

        private func timed(_ trust: ServerTrust) async -> TrustDecision {
            let clock = ContinuousClock()
            let start = clock.now
            let decision = await evaluate(trust)
            observe(decision, cached: false, start.duration(to: clock.now))
            return decision
        }

        /// A decision the evaluator reaches without suspending, answered inside the handshake without a task;
        /// `nil` sends the evaluation through `evaluate`/`evaluateAlone`.
        private func decidedAtOnce(_ trust: ServerTrust) -> TrustDecision? {
            guard let immediate else { return nil }
            let clock = ContinuousClock()
            let start = clock.now
            guard let decision = immediate(trust) else { return nil }
            observe(decision, cached: false, start.duration(to: clock.now))
            return decision
        }

        /// Under default handling `known` always runs first: what `evaluateAlone` evaluates, `decidedAtOnce`
        /// could not decide, so the direct path is not looked for again.
        private func afterKnown(_ trust: ServerTrust) -> ServerTrust {
            var trust = trust
            trust.directPathTried = immediate != nil
            return trust
        }

        var uncached: Functions {
            var known: ServerTrustVerifier.Known?
            if immediate != nil { known = { decidedAtOnce($0) } }
            return ({ await timed($0) }, known, { await timed(afterKnown($0)) })
        }

        /// The functions with `cache` consulted first (decisions stored under `key`) and filled after each evaluation.
        func cached(in cache: TrustEvaluationCache, policy key: String) -> Functions {
            @Sendable func hit(_ trust: ServerTrust) -> TrustDecision? {
                let hit = cache.decision(for: trust, policy: key)
                telemetry.cacheLookup(hit: hit != nil)
                if let hit { observe(hit, cached: true, .zero) }
                return hit
            }
            @Sendable func evaluateAndStore(_ trust: ServerTrust) async -> TrustDecision {
                let decision = await timed(trust)
                cache.store(decision, for: trust, policy: key)
                return decision
            }
            let evaluate: TrustEvaluatorFunction = { trust in
                if let decision = hit(trust) { return decision }
                return await evaluateAndStore(trust)
            }
            let known: ServerTrustVerifier.Known = { trust in
                if let decision = hit(trust) { return decision }
                guard let decision = decidedAtOnce(trust) else { return nil }
                cache.store(decision, for: trust, policy: key)
                return decision
            }
            return (evaluate, known, { await evaluateAndStore(afterKnown($0)) })
        }
    }

    /// The evaluator for `origin`, a key naming it uniquely within this session's configuration, and its
    /// decisions without suspending (`TrustEvaluator.decisionWithoutSuspending`) where it has them.
    private func evaluator(for origin: Origin) -> (String, TrustEvaluatorFunction, (@Sendable (ServerTrust) -> TrustDecision?)?) {
        switch configuration.serverTrust {
        case .configuration(let evaluator, let reporter):
            let port = origin.port
            let telemetry = self.telemetry
            return ("configuration", { trust in
                let evaluation = await evaluator.evaluation(for: trust, port: port)
                if let report = evaluation.report, let reporter {
                    telemetry.reportSubmitted(reporter.enqueue(report, to: evaluation.reportURIs), host: origin.host, to: evaluation.reportURIs)
                }
                return evaluation.decision
            }, nil)
        case .systemDefault:
            let evaluator = defaultEvaluator ?? DefaultTrustEvaluator()
            return ("system", { await evaluator.evaluate($0) }, { evaluator.decisionWithoutSuspending($0) })
        case .evaluator(let evaluator):
            return ("evaluator", { await evaluator.evaluate($0) }, { evaluator.decisionWithoutSuspending($0) })
        case .securityPolicy(let policy):
            return ("security-policy", { await policy.evaluate($0) }, nil)
        case .perHost(_, let otherHosts):
            let canonical = Self.canonical(origin.host)
            if let evaluator = perHost[canonical] {
                return ("host:" + canonical, { await evaluator.evaluate($0) }, { evaluator.decisionWithoutSuspending($0) })
            }
            return ("other-hosts", { await otherHosts.evaluate($0) }, { otherHosts.decisionWithoutSuspending($0) })
        }
    }

    private static func canonical(_ host: String) -> String {
        (try? PeerName(host: host))?.description ?? host.lowercased()
    }
}

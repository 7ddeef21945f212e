import Trust

/// One host's server-trust evaluation, the only wrapper between the session's evaluator and NIOSSL's callback: a
/// decision without suspending when one is known (the session's evaluation cache, or an ``ImmediateTrustEvaluator``'s
/// direct path), else the evaluation in a task — the cache consulted first and filled after — with missing
/// intermediates fetched when the session fetches them, a configuration file's pin-failure reports sent, and one
/// diagnostics hook, ``record(_:measured:)``, through which the decision a handshake went by (whoever made it: the
/// evaluator, a challenge handler) is logged, counted, traced and given to the decision observer
/// (``SessionTelemetry``).
///
/// A class, made once per route: the verifier of every connection on the route captures it in two closures, and a
/// closure that captures one reference needs no context of its own — as a struct it was copied into each, two
/// allocations of 216 bytes held for the life of every pooled connection (`trust-http-bench`'s `BENCH_HEAP_SITES`).
final class RouteEvaluation: Sendable {
    /// An evaluation's decision, with whether the cache answered and how long the evaluator took.
    struct Measured: Sendable {
        let decision: TrustDecision
        let cached: Bool
        let duration: Duration
    }

    /// The session's evaluator.
    private let evaluator: any TrustEvaluator
    /// The same, completing chains that lack an intermediate (nil when the session fetches none, or for a plain
    /// `http` origin).
    private let fetching: IntermediateFetchingEvaluator?
    /// The evaluator (or ``fetching``) as an ``ImmediateTrustEvaluator``, when it is one: cast once, here.
    private let immediate: (any ImmediateTrustEvaluator)?
    /// The evaluator as a configuration file's (the session's router casts it once), whose evaluations carry
    /// pin-failure reports, sent through `reporter`.
    private let configured: (any TrustConfigurationEvaluator)?
    private let reporter: PinFailureReporter?
    /// The session's evaluation cache and the key this host's decisions are stored under.
    private let cache: TrustEvaluationCache?
    private let key: String
    private let telemetry: SessionTelemetry
    private let origin: Origin

    init(
        evaluator: any TrustEvaluator, configured: (any TrustConfigurationEvaluator)?, fetching: IntermediateFetchingEvaluator?,
        reporter: PinFailureReporter?, cache: TrustEvaluationCache?, key: String, telemetry: SessionTelemetry, origin: Origin
    ) {
        self.evaluator = evaluator
        self.fetching = fetching
        if let fetching {
            self.immediate = fetching
        } else {
            self.immediate = evaluator as? any ImmediateTrustEvaluator
        }
        self.configured = configured
        self.reporter = reporter
        self.cache = cache
        self.key = key
        self.telemetry = telemetry
        self.origin = origin
    }

    /// A decision reached without suspending — a cached one, else the evaluator's direct path (then stored) —
    /// answered inside the handshake; `nil` when ``evaluate(_:afterImmediate:)`` must decide.
    func decisionWithoutSuspending(_ trust: ServerTrust) -> Measured? {
        if let hit = cachedDecision(trust) { return hit }
        guard let immediate else { return nil }
        let clock = ContinuousClock()
        let start = clock.now
        guard let decision = immediate.decisionWithoutSuspending(trust) else { return nil }
        cache?.store(decision, for: trust, policy: key)
        return Measured(decision: decision, cached: false, duration: start.duration(to: clock.now))
    }

    /// The decision for `trust`: cached, else evaluated (and stored). `afterImmediate`: the caller has just had
    /// `nil` from ``decisionWithoutSuspending(_:)``, so neither the cache nor the direct path is asked again.
    func evaluate(_ trust: ServerTrust, afterImmediate: Bool) async -> Measured {
        if !afterImmediate, let hit = cachedDecision(trust) { return hit }
        let clock = ContinuousClock()
        let start = clock.now
        let decision = await decide(trust, afterImmediate: afterImmediate)
        let duration = start.duration(to: clock.now)
        cache?.store(decision, for: trust, policy: key)
        return Measured(decision: decision, cached: false, duration: duration)
    }

    /// The evaluator's decision. A configuration file's evaluation is completed as a whole when the chain lacks an
    /// intermediate, and the pin-failure report (if any) of the final evaluation alone is sent: a refusal of the chain
    /// as presented, before its intermediate was fetched, is not a pin failure to report.
    private func decide(_ trust: ServerTrust, afterImmediate: Bool) async -> TrustDecision {
        if let configured {
            let port = origin.port
            var evaluation = await configured.configuredEvaluation(of: trust, port: port)
            if let fetching {
                evaluation = await fetching.completing(evaluation, of: trust, decision: \.decision) {
                    await configured.configuredEvaluation(of: $0, port: port)
                }
            }
            if let report = evaluation.report, let reporter {
                telemetry.reportSubmitted(reporter.enqueue(report, to: evaluation.reportURIs), host: origin.host, to: evaluation.reportURIs)
            }
            return evaluation.decision
        }
        if afterImmediate, let immediate { return await immediate.evaluate(afterImmediateMiss: trust) }
        if let fetching { return await fetching.evaluate(trust) }
        return await evaluator.evaluate(trust)
    }

    /// The diagnostics hook: `decision` is the one the handshake went by; `measured`, the evaluation behind it
    /// (whether cached, how long), when one ran.
    func record(_ decision: TrustDecision, measured: Measured?) {
        telemetry.decided(decision, host: origin.host, port: origin.port, cached: measured?.cached ?? false, duration: measured?.duration)
    }

    private func cachedDecision(_ trust: ServerTrust) -> Measured? {
        guard let cache else { return nil }
        let hit = cache.decision(for: trust, policy: key)
        telemetry.cacheLookup(hit: hit != nil)
        return hit.map { Measured(decision: $0, cached: true, duration: .zero) }
    }
}

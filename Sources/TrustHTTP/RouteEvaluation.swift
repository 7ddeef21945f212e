import Trust

/// One host's server-trust evaluation, the only one its route has: a decision without suspending when one is
/// known (the session's evaluation cache, or the evaluator's direct path), else the evaluation in a task — the
/// cache consulted first and filled after — plus one diagnostics hook, ``record(_:measured:)``, through which
/// the decision a handshake went by (whoever made it: the evaluator, a challenge handler) is logged, counted,
/// traced and given to the decision observer (``SessionTelemetry``).
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

    typealias Evaluate = @Sendable (ServerTrust) async -> TrustDecision
    typealias Immediate = @Sendable (ServerTrust) -> TrustDecision?

    /// The evaluator's evaluation, and the same after its ``immediate`` answer was asked for and not given.
    private let evaluate: Evaluate
    private let evaluateAfterImmediateMiss: Evaluate
    /// The evaluator's decision without suspending (its direct path), where it has one.
    private let immediate: Immediate?
    /// The session's evaluation cache and the key this host's evaluator is stored under.
    private let cache: TrustEvaluationCache?
    private let key: String
    private let telemetry: SessionTelemetry
    private let origin: Origin

    init(
        evaluate: @escaping Evaluate, afterImmediateMiss: @escaping Evaluate, immediate: Immediate?, cache: TrustEvaluationCache?, key: String,
        telemetry: SessionTelemetry, origin: Origin
    ) {
        self.evaluate = evaluate
        self.evaluateAfterImmediateMiss = afterImmediateMiss
        self.immediate = immediate
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
        guard let decision = immediate(trust) else { return nil }
        cache?.store(decision, for: trust, policy: key)
        return Measured(decision: decision, cached: false, duration: start.duration(to: clock.now))
    }

    /// The decision for `trust`: cached, else evaluated (and stored). `afterImmediate`: the caller has just had
    /// `nil` from ``decisionWithoutSuspending(_:)``, so neither the cache nor the direct path is asked again.
    func evaluate(_ trust: ServerTrust, afterImmediate: Bool) async -> Measured {
        if !afterImmediate, let hit = cachedDecision(trust) { return hit }
        let clock = ContinuousClock()
        let start = clock.now
        let decision = await (afterImmediate ? evaluateAfterImmediateMiss : evaluate)(trust)
        let duration = start.duration(to: clock.now)
        cache?.store(decision, for: trust, policy: key)
        return Measured(decision: decision, cached: false, duration: duration)
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

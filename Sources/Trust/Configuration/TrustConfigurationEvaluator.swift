/// An evaluator made from a trust configuration file: besides its decisions, what a connection to a host needs from
/// the file — the entry for the host (its TLS minimum and client identity), which configuration is in force (its
/// generation), the pin-failure report an evaluation makes, and how a user's cache of its decisions may be kept.
///
/// ``ConfiguredTrustEvaluator`` (one configuration) and ``ReloadingTrustConfiguration`` (the one in force, replaced
/// without a restart) adopt it. A `TrustHTTPClient` whose server trust is one of them applies all of it: the entry's
/// TLS minimum and client identity on each connection, reports sent through its reporter, connections pooled by
/// generation. Not public: a session follows a reloading configuration's swaps by observing it (retiring the
/// connections made before, loading the identities the new one names), which another adopter would not offer.
package protocol TrustConfigurationEvaluator: TrustEvaluator {
    /// The configuration in force, with its anchors read and its validators built.
    var current: ConfiguredTrustEvaluator { get }

    /// The generation of ``current``: 1 for the first configuration put in force, one more for each after it (a fixed
    /// configuration stays at 1). Connections made under one generation are not given to requests of another.
    var generation: UInt64 { get }

    /// The evaluation of `trust` under the configuration in force: the decision, the entry that matched, warnings,
    /// and the pin-failure report due (with where it goes). `port` is the connection's, which reports name.
    func configuredEvaluation(of trust: ServerTrust, port: Int) async -> ConfiguredTrustEvaluator.Evaluation

    /// The settings of a cache of this evaluator's decisions kept by its user (a session), given the user's own:
    /// the stricter of the two and the file's `evaluationCache`; `nil` for none (the file switches it off, or the
    /// evaluator caches its decisions itself).
    func userCacheSettings(_ settings: EvaluationCacheSettings?) -> EvaluationCacheSettings?
}

extension ConfiguredTrustEvaluator: TrustConfigurationEvaluator {
    /// This configuration.
    package var current: ConfiguredTrustEvaluator { self }

    /// Always 1: this configuration is never replaced.
    package var generation: UInt64 { 1 }

    /// ``evaluation(for:port:entryName:)``.
    package func configuredEvaluation(of trust: ServerTrust, port: Int) async -> Evaluation {
        await evaluation(for: trust, port: port)
    }

    /// The stricter of `settings` and the file's `evaluationCache` (`false` there: none).
    package func userCacheSettings(_ settings: EvaluationCacheSettings?) -> EvaluationCacheSettings? {
        EvaluationCacheSettings.stricter(settings, configuration.evaluationCache)
    }
}

import Trust
import TrustHTTP

/// What `--no-aia` (`get`, `inspect`) and `--aia` (`evaluate`) switch: missing intermediates fetched from the
/// chain's Authority Information Access, as iOS fetches them (see `IntermediateFetchingEvaluator`). `trust get`
/// sets it on its session (`TrustHTTPClientConfiguration.fetchesMissingIntermediates`); the commands that evaluate
/// without a session complete their decision here.
enum MissingIntermediates {
    /// `evaluate`'s decision for `trust`, completed by fetching when `fetches` (direct: these commands use no proxy);
    /// `resolve` maps `host:port` to addresses as `--resolve` does.
    static func decision(
        for trust: ServerTrust, fetches: Bool, resolve: [String: String] = [:], _ evaluate: @escaping @Sendable (ServerTrust) async -> TrustDecision
    ) async -> TrustDecision {
        guard fetches else { return await evaluate(trust) }
        let fetcher = HTTPIntermediateFetcher(resolve: resolve)
        let decision = await IntermediateFetchingEvaluator(Evaluation(body: evaluate), fetcher: fetcher.through(nil)).evaluate(trust)
        await fetcher.shutdown()
        return decision
    }

    /// `evaluate --config`'s evaluation of `trust`, completed by fetching when `fetches`: the configuration judges each
    /// completed chain, and the pin-failure report is the final evaluation's (the chain as presented is not what
    /// failed when its missing intermediate completes it).
    static func evaluation(
        for trust: ServerTrust, fetches: Bool, _ evaluate: @escaping @Sendable (ServerTrust) async -> ConfiguredTrustEvaluator.Evaluation
    ) async -> ConfiguredTrustEvaluator.Evaluation {
        let first = await evaluate(trust)
        guard fetches, IntermediateFetchingEvaluator.missingIssuer(in: first.decision) != nil else { return first }
        let fetcher = HTTPIntermediateFetcher()
        let completion = IntermediateFetchingEvaluator(Evaluation { await evaluate($0).decision }, fetcher: fetcher.through(nil))
        let completed = await completion.completing(first, of: trust, decision: \.decision) { await evaluate($0) }
        await fetcher.shutdown()
        return completed
    }

    /// A closure as an evaluator.
    private struct Evaluation: TrustEvaluator {
        let body: @Sendable (ServerTrust) async -> TrustDecision
        func evaluate(_ trust: ServerTrust) async -> TrustDecision { await body(trust) }
    }

    /// `--no-aia`'s help.
    static let noAIAHelp = "Do not fetch a missing intermediate from the chain's Authority Information Access (fetched by default, as iOS does)."
    /// `--aia`'s help.
    static let aiaHelp = "Fetch a missing intermediate from the chain's Authority Information Access over http, as iOS does (off: offline)."
}

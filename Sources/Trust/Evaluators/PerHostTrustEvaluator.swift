/// One evaluator per exact host name, and one for every other host: the evaluator of the name the chain must be valid
/// for (``ServerTrust/peerName``) decides. Names are compared canonically (`API.Example.com.` is `api.example.com`; an
/// IP address in any of its forms is itself); a chain checked with no name goes to `otherHosts`.
///
/// ```swift
/// configuration.serverTrust = PerHostTrustEvaluator(
///     ["api.example.com": try PublicKeysTrustEvaluator(pins: pins)], otherHosts: DefaultTrustEvaluator())
/// ```
///
/// For host patterns, pins with expiry and report-only modes, use a configuration file (``ConfiguredTrustEvaluator``).
public struct PerHostTrustEvaluator: ImmediateTrustEvaluator {
    /// An evaluator, and the same as an ``ImmediateTrustEvaluator`` when it is one (cast once, here).
    private struct Member: Sendable {
        let evaluator: any TrustEvaluator
        let immediate: (any ImmediateTrustEvaluator)?

        init(_ evaluator: any TrustEvaluator) {
            self.evaluator = evaluator
            self.immediate = evaluator as? any ImmediateTrustEvaluator
        }
    }

    /// The evaluators by host name, canonical as a ``PeerName`` is: a chain's name is looked up as it comes, with
    /// nothing formatted per evaluation.
    private let hosts: [PeerName: Member]
    private let otherHosts: Member

    /// `evaluators` for their hosts (keys: host names or IP addresses, in any case, with or without a final dot; a key
    /// that is neither can match no chain's name and is left out); `otherHosts` for the rest.
    public init(_ evaluators: [String: any TrustEvaluator], otherHosts: any TrustEvaluator) {
        var canonical: [PeerName: Member] = [:]
        for (host, evaluator) in evaluators {
            guard let name = try? PeerName(host: host) else { continue }
            canonical[name] = Member(evaluator)
        }
        self.hosts = canonical
        self.otherHosts = Member(otherHosts)
    }

    /// The decision of the evaluator for `trust`'s host.
    public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        await member(for: trust).evaluator.evaluate(trust)
    }

    /// The decision without suspending of the evaluator for `trust`'s host, when it is an ``ImmediateTrustEvaluator``
    /// and can tell at once.
    public func decisionWithoutSuspending(_ trust: ServerTrust) -> TrustDecision? {
        member(for: trust).immediate?.decisionWithoutSuspending(trust)
    }

    /// ``evaluate(_:)`` after ``decisionWithoutSuspending(_:)`` had no answer.
    public func evaluate(afterImmediateMiss trust: ServerTrust) async -> TrustDecision {
        let member = member(for: trust)
        guard let immediate = member.immediate else { return await member.evaluator.evaluate(trust) }
        return await immediate.evaluate(afterImmediateMiss: trust)
    }

    private func member(for trust: ServerTrust) -> Member {
        guard let name = trust.peerName else { return otherHosts }
        return hosts[name] ?? otherHosts
    }
}

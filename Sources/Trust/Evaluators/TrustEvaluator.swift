/// Decides whether to trust a server. Small evaluators compose (see ``CompositeTrustEvaluator``),
/// and a session can use a different one per host.
///
/// One requirement: the decision for a chain. An evaluator that can sometimes decide without suspending says so by
/// adopting ``ImmediateTrustEvaluator`` as well.
public protocol TrustEvaluator: Sendable {
    /// The decision for `trust`: its chain, the name it must be valid for, the time.
    func evaluate(_ trust: ServerTrust) async -> TrustDecision
}

/// An evaluator that can often decide without suspending (a path validator finding its path directly, a reloading
/// configuration's cache of decisions): a TLS verification callback then answers inside the handshake, without
/// starting a task. Optional: an evaluator without it is always asked through ``TrustEvaluator/evaluate(_:)``.
public protocol ImmediateTrustEvaluator: TrustEvaluator {
    /// A decision reached without suspending — the same one ``TrustEvaluator/evaluate(_:)`` returns — when the
    /// evaluator can tell at once; `nil` when ``TrustEvaluator/evaluate(_:)`` must run.
    func decisionWithoutSuspending(_ trust: ServerTrust) -> TrustDecision?

    /// ``TrustEvaluator/evaluate(_:)`` for a caller that has just had `nil` from ``decisionWithoutSuspending(_:)``
    /// for `trust`: the same decision, without repeating that attempt (a path validator's direct path, and its
    /// signature checks). The default is ``TrustEvaluator/evaluate(_:)``.
    func evaluate(afterImmediateMiss trust: ServerTrust) async -> TrustDecision
}

extension ImmediateTrustEvaluator {
    /// By default ``TrustEvaluator/evaluate(_:)``: nothing of the immediate attempt is skipped.
    public func evaluate(afterImmediateMiss trust: ServerTrust) async -> TrustDecision { await evaluate(trust) }
}

/// A configuration that cannot be used as given (e.g. pinning with no pins). Thrown when the
/// evaluator is built, never at the first connection.
public struct TrustConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error with its data, for this package's code (cases come in minor versions without breaking a
    /// client, who shows the error: its description says what is wrong).
    package let detail: Detail

    package init(_ detail: Detail) { self.detail = detail }

    /// Human-readable form.
    public var description: String { detail.description }

    package static let noPins = Self(.noPins)
    package static let noPinnedCertificates = Self(.noPinnedCertificates)
    package static let noEvaluators = Self(.noEvaluators)
}

extension TrustConfigurationError {
    /// The cases, exhaustive inside this package.
    package enum Detail: Hashable, Sendable {
        case noPins
        case noPinnedCertificates
        case noEvaluators

        /// Human-readable form.
        package var description: String {
            switch self {
            case .noPins: return "pinning was requested but no usable pin was given; an empty pin set would pin nothing"
            case .noPinnedCertificates: return "certificate pinning was requested but no certificate was given"
            case .noEvaluators: return "a composite evaluator needs at least one evaluator"
            }
        }
    }
}

/// The engine itself is an evaluator: its anchors and policy, nothing more.
extension PathValidator: ImmediateTrustEvaluator {}

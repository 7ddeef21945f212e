/// Decides whether to trust a server. Small evaluators compose (see ``CompositeTrustEvaluator``),
/// and a session can use a different one per host.
public protocol TrustEvaluator: Sendable {
    func evaluate(_ trust: ServerTrust) async -> TrustDecision

    /// A decision reached without suspending — the same one ``evaluate(_:)`` returns — when the
    /// evaluator can tell at once (a path validator finding its path directly); `nil` when
    /// ``evaluate(_:)`` must run. A TLS verification callback uses it to answer inside the
    /// handshake without starting a task. The default is `nil`.
    func decisionWithoutSuspending(_ trust: ServerTrust) -> TrustDecision?
}

extension TrustEvaluator {
    /// By default every decision goes through ``evaluate(_:)``.
    public func decisionWithoutSuspending(_ trust: ServerTrust) -> TrustDecision? { nil }
}

/// A configuration that cannot be used as given (e.g. pinning with no pins). Thrown when the
/// evaluator is built, never at the first connection.
public enum TrustConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    case noPins
    case noPinnedCertificates
    case noEvaluators

    /// Human-readable form.
    public var description: String {
        switch self {
        case .noPins: return "pinning was requested but no usable pin was given; an empty pin set would pin nothing"
        case .noPinnedCertificates: return "certificate pinning was requested but no certificate was given"
        case .noEvaluators: return "a composite evaluator needs at least one evaluator"
        }
    }
}

/// The engine itself is an evaluator: its anchors and policy, nothing more.
extension PathValidator: TrustEvaluator {}

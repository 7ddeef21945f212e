/// Validates the chain against the anchors (system roots unless told otherwise) under the
/// Web-PKI profile, checking the host name. Revocation is not checked (the "revocation-free
/// default" of Alamofire's terms): OCSP/CRL checking is not offered by this evaluator.
public struct DefaultTrustEvaluator: ImmediateTrustEvaluator {
    /// The validator that does the work.
    public var validator: PathValidator

    /// Creates an evaluator with the given anchors and policy.
    public init(anchors: TrustAnchors = .system, policy: ValidationPolicy = .webPKI) {
        self.validator = PathValidator(
            anchors: anchors, policy: policy,
            name: .systemDefault(
                systemRoots: anchors.includesSystemRoots, customAnchors: anchors.certificates.count))
    }

    /// Validates `trust` with the validator.
    public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        await validator.evaluate(trust)
    }

    /// Validates `trust` without the direct path the validator has just been asked for.
    public func evaluate(afterImmediateMiss trust: ServerTrust) async -> TrustDecision {
        await validator.evaluate(afterImmediateMiss: trust)
    }

    /// The validator's decision when it finds its path directly.
    public func decisionWithoutSuspending(_ trust: ServerTrust) -> TrustDecision? {
        validator.decisionWithoutSuspending(trust)
    }
}

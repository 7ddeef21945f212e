/// Validates the chain against the anchors (system roots unless told otherwise) under the
/// Web-PKI profile, checking the host name. Revocation is not checked (the "revocation-free
/// default" of Alamofire's terms): OCSP/CRL checking is not offered by this evaluator.
public struct DefaultTrustEvaluator: TrustEvaluator {
    /// The validator that does the work.
    public var validator: PathValidator

    /// Creates an evaluator with the given anchors and policy.
    public init(anchors: TrustAnchors = .system, policy: ValidationPolicy = .webPKI) {
        self.validator = PathValidator(anchors: anchors, policy: policy, name: anchors.includesSystemRoots
            ? (anchors.certificates.isEmpty ? "default (system roots)" : "default (system roots + \(anchors.certificates.count) custom anchors)")
            : "default (\(anchors.certificates.count) custom anchors only)")
    }

    /// Validates `trust` with the validator.
    public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        await validator.evaluate(trust)
    }

    /// The validator's decision when it finds its path directly.
    public func decisionWithoutSuspending(_ trust: ServerTrust) -> TrustDecision? {
        validator.decisionWithoutSuspending(trust)
    }
}

/// Requires a validated path (default rules) on which at least one certificate has a pinned
/// public key. The pin is checked inside the path search, never against extra presented
/// certificates.
public struct PublicKeysTrustEvaluator: TrustEvaluator {
    public let pins: Set<SPKIPin>
    public var validator: PathValidator

    /// - Throws: ``TrustConfigurationError/noPins`` when `pins` is empty.
    public init(pins: Set<SPKIPin>, anchors: TrustAnchors = .system, policy: ValidationPolicy = .webPKI) throws(TrustConfigurationError) {
        guard !pins.isEmpty else { throw .noPins }
        self.pins = pins
        var policy = policy
        policy.pins = pins
        self.validator = PathValidator(anchors: anchors, policy: policy, name: "public-key pinning (\(pins.count) pins)")
    }

    public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        await validator.evaluate(trust)
    }
}

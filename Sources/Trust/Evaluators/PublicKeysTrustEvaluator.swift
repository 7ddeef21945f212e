/// Requires a validated path (default rules) on which at least one certificate has a pinned
/// public key. The pin is checked inside the path search, never against extra presented
/// certificates.
public struct PublicKeysTrustEvaluator: ImmediateTrustEvaluator {
    /// The pinned public keys.
    public let pins: Set<SPKIPin>
    /// The validator that does the work, with the pins in its policy.
    public var validator: PathValidator

    /// - Throws: ``TrustConfigurationError`` when `pins` is empty.
    public init(pins: Set<SPKIPin>, anchors: TrustAnchors = .system, policy: ValidationPolicy = .webPKI) throws(TrustConfigurationError) {
        guard !pins.isEmpty else { throw .noPins }
        self.pins = pins
        var policy = policy
        policy.pins = pins
        self.validator = PathValidator(anchors: anchors, policy: policy, name: .publicKeyPins(pins: pins.count))
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

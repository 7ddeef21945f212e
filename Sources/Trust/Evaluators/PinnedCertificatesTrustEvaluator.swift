import X509

/// Trusts a server whose path validates to one of the pinned certificates.
///
/// By default the pinned certificates are the *only* anchors (so a pinned self-signed
/// certificate, intermediate or root works, and no other CA can stand in); with
/// `includesSystemRoots` they are added to the system roots and one of them must still be
/// on the validated path.
public struct PinnedCertificatesTrustEvaluator: TrustEvaluator {
    /// The pinned certificates.
    public let certificates: [Certificate]
    /// The validator that does the work, with the pinned certificates as anchors.
    public var validator: PathValidator

    /// - Throws: ``TrustConfigurationError`` when `certificates` is empty.
    public init(certificates: [Certificate], includesSystemRoots: Bool = false, policy: ValidationPolicy = .webPKI) throws(TrustConfigurationError) {
        guard !certificates.isEmpty else { throw .noPinnedCertificates }
        self.certificates = certificates
        var policy = policy
        policy.requiredCertificates = certificates
        let anchors = TrustAnchors(includesSystemRoots: includesSystemRoots, certificates: certificates)
        self.validator = PathValidator(anchors: anchors, policy: policy, name: .pinnedCertificates(certificates: certificates.count))
    }

    /// Validates `trust` with the validator.
    public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        await validator.evaluate(trust)
    }
}

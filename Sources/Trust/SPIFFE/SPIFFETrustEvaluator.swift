import X509

/// Trusts a peer by its SPIFFE ID: an X.509-SVID (X509-SVID.md) that chains to the bundle of its own trust domain
/// and whose ID one of the allowed matchers accepts.
///
/// ```swift
/// let bundles = SPIFFETrustBundles(try SPIFFEBundle.load(contentsOf: "/etc/spiffe/bundle.pem"))
/// let evaluator = try SPIFFETrustEvaluator(bundles: bundles, allowedIDs: [try SPIFFEIDMatcher(parsing: "spiffe://example.org/ns/prod/sa/api")])
/// configuration.serverTrust = evaluator     // https://10.0.0.7:8443/ — no DNS name needed
/// ```
///
/// The path is validated as RFC 5280 requires (X509-SVID.md §5.1) under ``policy`` — validity, signatures, key
/// strength, basic constraints, extended key usage for the purpose — with no host-name check (an SVID names a
/// workload, not a host), and ``SPIFFESVIDRule`` runs inside the path search: a candidate path that ends at another
/// trust domain's authority, or breaks an SVID rule, makes the search try the next one.
public struct SPIFFETrustEvaluator: ImmediateTrustEvaluator {
    /// The trusted trust domains and their anchors.
    public let bundles: SPIFFETrustBundles
    /// The IDs a peer may have (any one).
    public let allowedIDs: [SPIFFEIDMatcher]
    /// The path rules besides the SVID rules (``ValidationPolicy/checksPeerName`` is always off).
    public let policy: ValidationPolicy
    /// The validator doing the work: every bundle's anchors, ``policy``'s rules and the ``SPIFFESVIDRule``.
    public let validator: PathValidator

    /// An evaluator for the IDs `allowedIDs` accepts, each on a path to its own trust domain's anchors in `bundles`.
    ///
    /// - Parameters:
    ///   - bundles: the trusted trust domains, each with its anchors.
    ///   - allowedIDs: the SPIFFE IDs, trust domains or path prefixes a peer may have (at least one).
    ///   - policy: the path rules; the default validates a TLS server (EKU serverAuth when present). A server
    ///     verifying client SVIDs uses `.tlsClient` (`ClientAuthentication` in TrustNIO does).
    /// - Throws: ``SPIFFEConfigurationError`` when no ID is allowed, no bundle has an anchor, or an allowed ID's trust
    ///   domain has no bundle (it could never match) — at construction, never at the first connection.
    public init(
        bundles: SPIFFETrustBundles, allowedIDs: [SPIFFEIDMatcher],
        policy: ValidationPolicy = ValidationPolicy(purpose: .tlsServer, checksPeerName: false)
    ) throws(SPIFFEConfigurationError) {
        guard !allowedIDs.isEmpty else { throw .noAllowedIDs }
        guard !bundles.isEmpty else { throw .noBundles }
        for matcher in allowedIDs where bundles.anchors(for: matcher.allowedTrustDomain).isEmpty {
            throw .noBundleForAllowedID(matcher.description, trusted: bundles.trustDomains.map(\.name))
        }
        var policy = policy
        policy.checksPeerName = false
        self.bundles = bundles
        self.allowedIDs = allowedIDs
        self.policy = policy
        self.validator = Self.pathValidator(bundles: bundles, allowedIDs: allowedIDs, policy: policy, name: .named("SPIFFE"))
    }

    /// A validator for SVID paths: only the bundles' anchors, `policy`'s rules (peer name never checked), the
    /// ``SPIFFESVIDRule``, then `additionalRules`.
    public static func pathValidator(
        bundles: SPIFFETrustBundles, allowedIDs: [SPIFFEIDMatcher], policy: ValidationPolicy, additionalRules: [any PathRule] = [],
        name: TrustDecision.Policy
    ) -> PathValidator {
        var policy = policy
        policy.checksPeerName = false
        return PathValidator(
            anchors: .only(bundles.allAnchors), policy: policy,
            additionalRules: [SPIFFESVIDRule(bundles: bundles, allowedIDs: allowedIDs)] + additionalRules, name: name)
    }

    /// The decision on `trust`'s chain; its peer name, if any, is not checked.
    public func evaluate(_ trust: ServerTrust) async -> TrustDecision { await validator.evaluate(trust) }

    /// The validator's decision without suspending, when its direct path is found.
    public func decisionWithoutSuspending(_ trust: ServerTrust) -> TrustDecision? { validator.decisionWithoutSuspending(trust) }

    /// The validator's full search, its direct path already tried.
    public func evaluate(afterImmediateMiss trust: ServerTrust) async -> TrustDecision { await validator.evaluate(afterImmediateMiss: trust) }
}

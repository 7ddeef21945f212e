import Foundation
import Trust
import X509

/// A path validator whose revocation checking also uses the CRLs the chain's certificates point to: before each
/// evaluation, the ``CRLFetcher`` fetches (or finds cached) the CRLs of the certificates in scope, then the
/// validator decides with those and any CRLs the policy holds.
///
/// ```swift
/// var policy = ValidationPolicy.webPKI
/// policy.revocation = RevocationPolicy(mode: .soft, depth: .chain)
/// let evaluator = try RevocationCheckingEvaluator(policy: policy)
/// configuration.serverTrust = .evaluator(evaluator)
/// ```
///
/// With revocation `off` it fetches nothing. The decision says which CRL revoked a certificate, or why the status
/// is unknown (no distribution point, a fetch that failed and how, a stale or badly signed CRL).
public struct RevocationCheckingEvaluator: TrustEvaluator {
    /// The validator, its policy's revocation consulting ``fetcher``'s cache.
    public let validator: PathValidator
    /// Where CRLs come from.
    public let fetcher: CRLFetcher

    /// A validator over `anchors` and `policy`, with `fetcher` (a new one by default) filling its CRL cache.
    public init(anchors: TrustAnchors = .system, policy: ValidationPolicy = .webPKI, fetcher: CRLFetcher? = nil, name: String = "default + fetched CRLs") throws {
        let fetcher = try fetcher ?? CRLFetcher()
        var policy = policy
        policy.revocation.cache = fetcher.cache
        self.validator = PathValidator(anchors: anchors, policy: policy, name: name)
        self.fetcher = fetcher
    }

    private var revocation: RevocationPolicy { validator.policy.revocation }

    /// Fetches what is missing, then validates.
    public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        if revocation.mode != .off {
            await fetcher.prefetch(for: trust.presentedChain, depth: revocation.depth, at: trust.evaluationTime)
        }
        return await validator.evaluate(trust)
    }

    /// The validator's direct answer when nothing needs fetching; else `nil` (``evaluate(_:)`` fetches).
    public func decisionWithoutSuspending(_ trust: ServerTrust) -> TrustDecision? {
        guard revocation.mode == .off || fetcher.isSettled(for: trust.presentedChain, depth: revocation.depth, at: trust.evaluationTime) else { return nil }
        return validator.decisionWithoutSuspending(trust)
    }
}

import Foundation
import Trust
import X509

/// A path validator whose revocation checking also asks the certificates' OCSP responders and fetches the CRLs they
/// point to: before an evaluation, the path is built, each certificate in scope is asked about at its OCSP responder
/// (``OCSPFetcher``), and for any certificate still without an answer its CRLs are fetched (``CRLFetcher``); then the
/// validator decides with those and any CRLs the policy holds.
///
/// ```swift
/// var policy = ValidationPolicy.webPKI
/// policy.revocation = RevocationPolicy(mode: .soft, depth: .chain)
/// let evaluator = try RevocationCheckingEvaluator(policy: policy)
/// configuration.serverTrust = .evaluator(evaluator)
/// ```
///
/// OCSP first, CRLs as the fallback: a response is a few kilobytes about one certificate, a CRL may be megabytes
/// about all of them. With revocation `off` nothing is fetched. The decision says which source revoked a
/// certificate, or why its status is unknown (no responder or distribution point, a query or fetch that failed and
/// how, a stale or badly signed response or CRL).
public struct RevocationCheckingEvaluator: TrustEvaluator {
    /// The validator, its policy's revocation consulting ``fetcher``'s and ``ocspFetcher``'s caches.
    public let validator: PathValidator
    /// Where CRLs come from.
    public let fetcher: CRLFetcher
    /// Where OCSP responses come from; `nil` when OCSP is not used.
    public let ocspFetcher: OCSPFetcher?
    /// The same validator without revocation checking: it finds the path whose certificates are asked about.
    private let pathFinder: PathValidator

    /// A validator over `anchors` and `policy`, with `fetcher` and `ocspFetcher` (new ones by default) filling its caches;
    /// `usesOCSP: false` fetches CRLs only.
    public init(
        anchors: TrustAnchors = .system, policy: ValidationPolicy = .webPKI, fetcher: CRLFetcher? = nil, ocspFetcher: OCSPFetcher? = nil,
        usesOCSP: Bool = true, name: String = "default + fetched revocation"
    ) throws {
        let fetcher = try fetcher ?? CRLFetcher()
        let ocsp = usesOCSP ? try ocspFetcher ?? OCSPFetcher() : nil
        var policy = policy
        policy.revocation.cache = fetcher.cache
        policy.revocation.ocspCache = ocsp?.cache
        self.validator = PathValidator(anchors: anchors, policy: policy, name: name)
        var unchecked = policy
        unchecked.revocation = .off
        self.pathFinder = PathValidator(anchors: anchors, policy: unchecked, name: name)
        self.fetcher = fetcher
        self.ocspFetcher = ocsp
    }

    private var revocation: RevocationPolicy { validator.policy.revocation }

    /// Shuts the fetchers' sessions down.
    public func shutdown() async {
        await fetcher.shutdown()
        await ocspFetcher?.shutdown()
    }

    /// Fetches what is missing, then validates.
    public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        guard revocation.mode != .off, !isSettled(trust) else { return await validator.evaluate(trust) }
        let found = await pathFinder.evaluate(trust)
        // A chain refused for other reasons is refused whatever its revocation status: nothing to ask.
        guard found.isTrusted else { return await validator.evaluate(trust) }
        let path = found.validatedPath
        let positions = revocation.checkedPositions(in: path)
        if let ocspFetcher {
            await ocspFetcher.prefetch(positions.map { (path[$0], path[$0 + 1]) }, at: trust.evaluationTime)
        }
        // CRLs for the certificates OCSP left without an answer.
        let unanswered = positions.map { path[$0] }.filter { certificate in
            ocspFetcher?.cache.entry(for: certificate)?.isDefinitive(for: certificate, at: trust.evaluationTime) != true
        }
        await fetcher.prefetch(for: unanswered, depth: .chain, at: trust.evaluationTime)
        return await validator.evaluate(trust)
    }

    /// The validator's direct answer when nothing needs fetching; else `nil` (``evaluate(_:)`` fetches).
    public func decisionWithoutSuspending(_ trust: ServerTrust) -> TrustDecision? {
        guard revocation.mode == .off || isSettled(trust) else { return nil }
        return validator.decisionWithoutSuspending(trust)
    }

    /// Whether every certificate of the presented chain in scope has an answer kept: a current OCSP answer, or else
    /// current CRLs (or recent failures of both).
    private func isSettled(_ trust: ServerTrust) -> Bool {
        let chain = trust.presentedChain
        let inScope = revocation.depth == .leaf ? Array(chain.prefix(1)) : chain
        let time = trust.evaluationTime
        return inScope.allSatisfy { certificate in
            if let ocspFetcher {
                guard ocspFetcher.isSettled(for: [certificate], at: time) else { return false }
                if ocspFetcher.cache.entry(for: certificate)?.isDefinitive(for: certificate, at: time) == true { return true }
            }
            return fetcher.isSettled(for: [certificate], depth: .leaf, at: time)
        }
    }
}

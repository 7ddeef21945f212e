// A client that refuses servers whose certificate its CA has revoked: OCSP responders asked as the handshake needs
// them (CRLs as the fallback), answers cached until their nextUpdate, and a budget so that a dead responder costs
// at most a few seconds. Hard checking refuses what cannot be checked; soft checking lets it through with a note.
import Foundation
import Trust
import TrustHTTP

/// Revocation checking for an upstream's certificates.
public enum RevocationChecking {
    /// An evaluator over `anchors` that checks the leaf (or every certificate of the path, `wholeChain`) by OCSP
    /// with nonces, then CRLs; `hard` refuses a certificate whose status no source gives.
    public static func evaluator(anchors: TrustAnchors, hard: Bool, wholeChain: Bool = false, budget: Duration = .seconds(3)) throws
        -> RevocationCheckingEvaluator
    {
        var policy = ValidationPolicy.webPKI
        // Certificates valid for a week or less are not checked (CA/B Forum BR §4.9.7: they need not be covered).
        policy.revocation = RevocationPolicy(
            mode: hard ? .hard : .soft, depth: wholeChain ? .chain : .leaf, shortLivedExemption: RevocationPolicy.shortLivedCertificateLimit)
        return try RevocationCheckingEvaluator(anchors: anchors, policy: policy, ocspFetcher: fetcher(), fetchBudget: budget)
    }

    /// The OCSP fetcher: small answers, a short timeout, nonces (the responder signs each answer afresh), SHA-256
    /// CertIDs (SHA-1 only for a responder that refuses them).
    public static func fetcher() throws -> OCSPFetcher {
        try OCSPFetcher(
            limits: OCSPFetcher.Limits(maximumSize: 16 << 10, timeout: .seconds(2), retryAfterFailure: 30),
            options: OCSPFetcher.Options(nonce: true, hashAlgorithm: .sha256))
    }

    /// One line for the startup log: what is checked and how.
    public static func describe(_ evaluator: RevocationCheckingEvaluator) -> String {
        let revocation = evaluator.validator.policy.revocation
        return "revocation \(revocation.mode.rawValue), \(revocation.depth.rawValue); short-lived exemption "
            + "\(revocation.shortLivedExemption.map { "\(Int($0 / 86_400)) days" } ?? "none")"
    }

    /// What an operator is shown of a fetcher's settings.
    public static func describe(_ fetcher: OCSPFetcher) -> String {
        "OCSP: at most \(fetcher.limits.maximumSize) bytes, \(fetcher.limits.timeout) per request, a failed responder retried after "
            + "\(Int(fetcher.limits.retryAfterFailure)) s; nonces \(fetcher.options.nonce ? "on" : "off"), CertID \(fetcher.options.hashAlgorithm.rawValue)"
    }
}

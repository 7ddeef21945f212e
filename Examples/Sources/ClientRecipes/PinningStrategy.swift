// Pinning that survives certificate rotation. Servers renew their leaf every few weeks (ACME) and now and then move
// to another issuing CA: pinning the leaf certificate (AFNetworking's certificate mode) breaks at every renewal;
// pinning the issuing CA's public key, with a backup key announced before it is used (RFC 7469 §4.3), survives both.
import Foundation
import Trust
import X509

/// The ways an app pins a server, side by side.
public enum PinningStrategy {
    /// The SPKI pins of the issuing CA in use and of a backup key (a spare CA key, or the next CA's), over `anchors`.
    public static func issuerKeys(current issuer: Certificate, backup: SPKIPin, anchors: TrustAnchors) throws -> PublicKeysTrustEvaluator {
        try PublicKeysTrustEvaluator(pins: [SPKIPin(certificate: issuer), backup], anchors: anchors)
    }

    /// The leaf certificate itself as the only anchor (AFSSLPinningModeCertificate's semantics): the chain must end at
    /// this certificate.
    public static func leafCertificate(_ leaf: Certificate) throws -> PinnedCertificatesTrustEvaluator {
        try PinnedCertificatesTrustEvaluator(certificates: [leaf], includesSystemRoots: false, policy: .webPKI)
    }

    /// `evaluator` with its decisions kept in `cache` (several clients sharing one cache): a renewed certificate is
    /// another chain, never served a decision made for the old one.
    public static func cached(_ evaluator: PublicKeysTrustEvaluator, in cache: TrustEvaluationCache) -> CachingTrustEvaluator {
        CachingTrustEvaluator(evaluator, cache: cache, policyIdentity: "issuer-keys:" + evaluator.pins.map(\.base64).sorted().joined(separator: ","))
    }

    /// Key pins and another evaluator both: a server is trusted only if each trusts it (the app's own check after
    /// the pins, say).
    public static func both(_ keys: PublicKeysTrustEvaluator, and other: any TrustEvaluator) throws -> CompositeTrustEvaluator {
        try CompositeTrustEvaluator([keys, other])
    }

    public static func describe(_ composite: CompositeTrustEvaluator) -> String {
        "all of \(composite.evaluators.count) evaluators: " + composite.evaluators.map { "\(type(of: $0))" }.joined(separator: ", ")
    }

    /// What each strategy pins, for the app's diagnostics screen.
    public static func describe(_ evaluator: PublicKeysTrustEvaluator) -> String {
        "\(evaluator.pins.count) key pins under \(evaluator.validator.name) (\(evaluator.validator.additionalRules.count) rules of the app's own)"
    }

    public static func describe(_ evaluator: PinnedCertificatesTrustEvaluator) -> String {
        "\(evaluator.certificates.count) pinned certificates under \(evaluator.validator.name)"
    }

    public static func describe(_ cached: CachingTrustEvaluator) -> String {
        "cached in \(cached.cache.capacity) decisions for \(cached.cache.timeToLive), over \(type(of: cached.base))"
    }
}

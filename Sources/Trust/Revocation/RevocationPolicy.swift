import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Whether, and how strictly, certificates are checked for revocation, and the CRLs (RFC 5280 §6.3) and OCSP
/// responses (RFC 6960) to check against.
///
/// - ``Mode/off`` (the default): no check.
/// - ``Mode/soft``: a certificate a usable CRL lists, or a usable OCSP response says is revoked, is refused; one
///   whose status is unknown (no CRL or response covers it, or every one that would is stale, from the future, badly
///   signed or otherwise unusable) is allowed, with a note in the decision.
/// - ``Mode/hard``: unknown is refused too (``TrustFailureReason/Kind/revocationStatusUnknown``).
///
/// ``Depth/leaf`` checks the leaf only; ``Depth/chain`` every certificate of the path but the anchor. A leaf
/// valid for 7 days or less is not checked — a "Short-lived Subscriber Certificate" of the CA/Browser Forum
/// Baseline Requirements (§1.6.1), which need not carry revocation information — unless ``shortLivedExemption`` is `nil`.
///
/// CRLs are direct CRLs signed by the certificate's issuer with the key on the validated path; delta and
/// indirect CRLs are not used (see ``CertificateRevocationList``). OCSP responses are signed by the issuer or a
/// responder it delegated to (``OCSPResponse/verdict(for:issuer:at:nonce:)``).
///
/// **When both sources speak**: every usable source is consulted. "Revoked" from any of them decides (a CRL or a
/// response that lists the certificate is never outweighed by another that does not, whichever is newer); otherwise
/// "good" from any of them decides; otherwise the status is unknown, and the decision says why for each source.
public struct RevocationPolicy: Sendable, Hashable {
    /// How an unknown status is treated.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// No revocation check.
        case off
        /// Revoked → refused; unknown → allowed with a note.
        case soft
        /// Revoked or unknown → refused.
        case hard
    }

    /// Which certificates are checked.
    public enum Depth: String, Sendable, Hashable, CaseIterable {
        /// The leaf only.
        case leaf
        /// Every certificate of the path but the anchor.
        case chain
    }

    /// How an unknown status is treated.
    public var mode: Mode
    /// Which certificates are checked.
    public var depth: Depth
    /// A leaf whose validity period (RFC 5280 §4.1.2.5, both ends included) is at most this long is not checked;
    /// `nil` checks every leaf.
    public var shortLivedExemption: TimeInterval?
    /// The CRLs to decide from.
    public var crls: [CertificateRevocationList]
    /// More CRLs, obtained while the process runs (fetched from distribution points); consulted with ``crls``.
    public var cache: CRLCache?
    /// OCSP responses obtained while the process runs (fetched from responders, or stapled).
    public var ocspCache: OCSPCache?

    /// Seven days, the CA/Browser Forum's bound for short-lived subscriber certificates (604,800 seconds).
    public static let shortLivedCertificateLimit: TimeInterval = 604_800

    /// A policy; `.off` by default.
    public init(
        mode: Mode = .off, depth: Depth = .leaf, shortLivedExemption: TimeInterval? = RevocationPolicy.shortLivedCertificateLimit,
        crls: [CertificateRevocationList] = [], cache: CRLCache? = nil, ocspCache: OCSPCache? = nil
    ) {
        self.mode = mode
        self.depth = depth
        self.shortLivedExemption = shortLivedExemption
        self.crls = crls
        self.cache = cache
        self.ocspCache = ocspCache
    }

    /// The positions of `path` (leaf first, anchor last) whose revocation status this policy checks: none when off;
    /// those with an issuer on the path (not the anchor), the leaf only for ``Depth/leaf``, and not a leaf valid for
    /// ``shortLivedExemption`` or less.
    public func checkedPositions(in path: [Certificate]) -> [Int] {
        guard mode != .off else { return [] }
        return positions(in: path)
    }

    /// ``checkedPositions(in:)`` whatever the mode.
    func positions(in path: [Certificate]) -> [Int] {
        let withIssuer = path.count - 1
        guard withIssuer > 0 else { return [] }
        var positions = depth == .leaf ? [0] : Array(0..<withIssuer)
        if let limit = shortLivedExemption, positions.first == 0 {
            let leaf = path[0]
            // RFC 5280 §4.1.2.5: the validity period includes both notBefore and notAfter.
            if leaf.notValidAfter.timeIntervalSince(leaf.notValidBefore) + 1 <= limit { positions.removeFirst() }
        }
        return positions
    }

    /// No revocation check.
    public static let off = RevocationPolicy()
}

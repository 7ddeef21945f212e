#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Whether certificates must carry Signed Certificate Timestamps from known logs (RFC 6962), as Apple's and Chrome's
/// CT policies require of publicly trusted certificates.
///
/// - ``Mode/off`` (the default): no check.
/// - ``Mode/reportOnly``: a certificate that does not meet the policy is allowed, with a note in the decision.
/// - ``Mode/enforce``: it is refused (`ct-policy-not-met`).
///
/// The policy applies to paths that end at a system root; paths to custom anchors are exempt unless
/// ``appliesToCustomAnchors`` is set. A log list published more than ``maximumLogListAge`` before the evaluation
/// time is not enforced (Chrome's 70-day rule: an old list would refuse certificates logged to newer logs), and the
/// decision says so in a note.
///
/// A certificate meets the policy when its embedded SCTs include at least the required number of valid ones
/// (2 for a certificate valid 180 days or less, 3 beyond — Apple's policy) from at least ``minimumOperators``
/// distinct log operators. An SCT is valid when its log is on the list and was usable when it signed (not pending or
/// rejected; a retired or read-only log counts only for SCTs timestamped before it left service), the certificate's
/// expiry falls in the log's temporal interval if it has one, the timestamp is not after the evaluation time, and
/// the signature over the precertificate entry — the TBSCertificate without the SCT list, and the SHA-256 of the
/// issuer's key from the validated path — verifies with the log's key.
public struct CertificateTransparencyPolicy: Sendable, Hashable {
    /// What a certificate that does not meet the policy comes to.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// No check.
        case off
        /// Allowed, with a note.
        case reportOnly = "report-only"
        /// Refused.
        case enforce
    }

    /// What happens when the policy is not met.
    public var mode: Mode
    /// The logs SCTs are checked against.
    public var logList: CTLogList?
    /// Whether paths to custom anchors are checked too (by default only paths to system roots are).
    public var appliesToCustomAnchors: Bool
    /// A log list older than this is not enforced (70 days).
    public var maximumLogListAge: TimeInterval
    /// Distinct log operators required (2).
    public var minimumOperators: Int

    /// Seventy days, Chrome's bound on a log list's age (6,048,000 seconds).
    public static let logListAgeLimit: TimeInterval = 70 * 86_400

    /// A policy; `.off` by default.
    public init(
        mode: Mode = .off, logList: CTLogList? = nil, appliesToCustomAnchors: Bool = false,
        maximumLogListAge: TimeInterval = CertificateTransparencyPolicy.logListAgeLimit, minimumOperators: Int = 2
    ) {
        self.mode = mode
        self.logList = logList
        self.appliesToCustomAnchors = appliesToCustomAnchors
        self.maximumLogListAge = maximumLogListAge
        self.minimumOperators = minimumOperators
    }

    /// No check.
    public static let off = CertificateTransparencyPolicy()

    /// Valid SCTs required for a certificate valid `lifetime` seconds: 2 up to 180 days, 3 beyond (Apple's CT policy).
    package static func requiredSCTs(forLifetime lifetime: TimeInterval) -> Int {
        lifetime <= 180 * 86_400 ? 2 : 3
    }
}

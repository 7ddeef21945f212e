import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A pin-validation failure report in the spirit of RFC 7469 §3 and TrustKit: what was served,
/// what validated, which pins were known, and what happened.
public struct PinFailureReport: Sendable, Hashable, Codable {
    /// When the connection was evaluated, in RFC 3339 form.
    public var dateTime: String
    /// The peer's host name, or empty when there was none.
    public var hostname: String
    /// The port of the connection.
    public var port: Int
    /// The configuration entry's pattern that matched (`**.example.com`), or the hostname for the base entry.
    public var notedHostname: String
    /// Whether the matched entry's pattern is a wildcard (covers names below the base).
    public var includeSubdomains: Bool
    /// Whether the pins were enforced: the entry is in enforce mode and the pin set has not expired.
    public var enforceMode: Bool
    /// The certificates the server presented, as PEM.
    public var servedCertificateChain: [String]
    /// The path that chain verification built, as PEM (RFC 7469 §3's "validated-certificate-chain"): the validated
    /// path, or — when the pins alone refused it — the path that validated but for them; empty when no path validated.
    public var validatedCertificateChain: [String]
    /// The entry's pins, as `pin-sha256="BASE64"`.
    public var knownPins: [String]
    /// `pin-validation-failed`, `pin-set-expired`, or the first failure reason's code — also for a failure a lenient
    /// mode let through (`revocation-status-unknown` under soft revocation checking, `ct-policy-not-met` under
    /// report-only Certificate Transparency).
    public var validationResult: String
    /// When the pin set expires, in RFC 3339 form; `nil` when it has no expiry.
    public var effectiveExpirationDate: String?

    enum CodingKeys: String, CodingKey {
        case dateTime = "date-time"
        case hostname
        case port
        case notedHostname = "noted-hostname"
        case includeSubdomains = "include-subdomains"
        case enforceMode = "enforce-mode"
        case servedCertificateChain = "served-certificate-chain"
        case validatedCertificateChain = "validated-certificate-chain"
        case knownPins = "known-pins"
        case validationResult = "validation-result"
        case effectiveExpirationDate = "effective-expiration-date"
    }

    init(decision: TrustDecision, trust: ServerTrust, port: Int, entry: TrustConfiguration.Entry, pinsExpired: Bool) {
        dateTime = RFC3339.string(trust.evaluationTime)
        hostname = trust.peerName?.description ?? ""
        self.port = port
        notedHostname = entry.host?.base ?? hostname
        includeSubdomains = entry.host.map { $0.kind != .exact } ?? false
        enforceMode = entry.mode == .enforce && !pinsExpired
        servedCertificateChain = trust.presentedChain.map(\.pemString)
        validatedCertificateChain = Self.verifiedPath(of: decision).map(\.pemString)
        knownPins = (entry.pins?.sha256 ?? []).map(\.headerForm)
        if pinsExpired {
            validationResult = "pin-set-expired"
        } else if decision.reasons.contains(where: { $0.code.contains("pin") }) {
            validationResult = "pin-validation-failed"
        } else {
            validationResult = (decision.reasons.first ?? decision.allowedFailures.first)?.code ?? "pin-validation-failed"
        }
        effectiveExpirationDate = entry.pins?.expires.map(RFC3339.string)
    }

    /// The path chain verification built: the validated path; for a decision refused by pin reasons only (pins are
    /// checked inside the path search), the closest path, which validated but for them; otherwise none.
    static func verifiedPath(of decision: TrustDecision) -> [Certificate] {
        if !decision.validatedPath.isEmpty { return decision.validatedPath }
        let pinKinds: Set<TrustFailureReason.Kind> = [.pinMismatch, .pinnedCertificateNotInPath]
        guard !decision.reasons.isEmpty, decision.reasons.allSatisfy({ pinKinds.contains($0.kind) }) else { return [] }
        return decision.closestPath
    }

    /// What identifies "the same failure" for deduplication: host, port, result, the chains and pins (not the time).
    public var deduplicationKey: String {
        ([hostname, String(port), validationResult] + servedCertificateChain + validatedCertificateChain + knownPins).joined(separator: "\u{1F}")
    }

    /// The report as JSON (keys sorted).
    public func json() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)) ?? Data()
    }
}

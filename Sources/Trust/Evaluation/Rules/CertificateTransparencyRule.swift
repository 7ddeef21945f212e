import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Checks the leaf's embedded SCTs against the Certificate Transparency policy (``CertificateTransparencyPolicy``):
/// under ``CertificateTransparencyPolicy/Mode/enforce`` a leaf that does not meet it is refused
/// (``TrustFailureReason/Kind/certificateTransparencyPolicyNotMet``);
/// under ``CertificateTransparencyPolicy/Mode/reportOnly`` it is noted. Paths ending at a custom anchor are exempt
/// unless the policy applies to them; a missing or stale log list is not enforced, with a note saying why.
struct CertificateTransparencyRule: PathRule {
    let policy: CertificateTransparencyPolicy
    /// The keys of the custom (not system) anchors.
    let customAnchors: Set<SPKIPin>

    /// Why the policy does not apply to `path` at `time`, or `nil` when it does.
    func exemption(_ path: CertificatePath, at time: Date) -> String? {
        guard path.count >= 2, path.endsAtAnchor else { return "" }
        if !policy.appliesToCustomAnchors, let anchor = path.facts.last, customAnchors.contains(anchor.spkiPin) {
            return ""  // exempt, silently: CT is a Web PKI requirement
        }
        guard let list = policy.logList else { return "Certificate Transparency is not checked: no CT log list is configured" }
        if let published = list.timestamp, time.timeIntervalSince(published) > policy.maximumLogListAge {
            let days = Int(time.timeIntervalSince(published) / 86_400)
            return
                "Certificate Transparency is not enforced: the CT log list was published \(RFC3339.string(published)), \(days) days before the evaluation time (more than \(Int(policy.maximumLogListAge / 86_400)) days: an old list would refuse certificates from newer logs)"
        }
        return nil
    }

    func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        guard policy.mode == .enforce, exemption(path, at: context.evaluationTime) == nil else { return [] }
        let report = CertificateTransparencyReport.check(leaf: path.leaf, issuer: path.certificates[1], policy: policy, at: context.evaluationTime)
        guard !report.meetsPolicy else { return [] }
        return [Self.reason(report, subject: path.leaf.displayName)]
    }

    var observesTrustedPaths: Bool { true }

    /// Report-only findings, and why the policy was not enforced.
    func observe(_ path: CertificatePath, context: RuleContext) -> PathObservation {
        var observation = PathObservation()
        if let why = exemption(path, at: context.evaluationTime) {
            if !why.isEmpty { observation.notes.append(why) }
            return observation
        }
        guard policy.mode == .reportOnly else { return observation }
        let report = CertificateTransparencyReport.check(leaf: path.leaf, issuer: path.certificates[1], policy: policy, at: context.evaluationTime)
        if !report.meetsPolicy {
            observation.notes.append(
                "\(path.leaf.displayName) does not meet the Certificate Transparency policy (allowed: report-only): \(report.unescapedSummary)")
            observation.allowedFailures.append(Self.reason(report, subject: path.leaf.displayName))
        }
        return observation
    }

    static func reason(_ report: CertificateTransparencyReport, subject: String) -> TrustFailureReason {
        .certificateTransparencyPolicyNotMet(
            subject: subject, validSCTs: report.validCount, requiredSCTs: report.requiredSCTs, operators: report.operators.count,
            requiredOperators: report.requiredOperators, invalidSCTs: report.invalidCount, unknownLogSCTs: report.unknownLogCount,
            detail: report.unescapedSummary)
    }
}

import Foundation
import Trust
import X509

/// Certificate Transparency on real certificates: the badssl.com production chains with embedded SCTs must meet the
/// CT policy, enforced, against the published keys of the logs that signed them (`Conformance/ct-log-list.json`),
/// each at its case's validation time; the chain served without SCTs (`subdomain-no-sct`) must not.
enum CTRunner {
    /// The cases judged: those of badssl-prod the path validation expects to succeed.
    static func run(_ testCase: LimboCase, logList: CTLogList) async -> CaseOutcome? {
        guard testCase.expected_result == "SUCCESS", let text = testCase.validation_time, let time = RFC3339.parse(text),
            let leaf = try? CertificateSource.certificates(pem: testCase.peer_certificate).first
        else { return nil }
        let scts = (try? SignedCertificateTimestamp.embedded(in: leaf)) ?? []
        let expectsSCTs = !testCase.id.contains("no-sct")
        // Old certificates issued before CT was required carry none: they are not judged (only the no-sct case is).
        guard !scts.isEmpty || !expectsSCTs else { return nil }
        var trusted: [Certificate] = []
        var intermediates: [Certificate] = []
        for pem in testCase.trusted_certs { trusted += (try? CertificateSource.certificates(pem: pem)) ?? [] }
        for pem in testCase.untrusted_intermediates { intermediates += (try? CertificateSource.certificates(pem: pem)) ?? [] }
        var list = logList
        list.timestamp = time  // as if the list were current at the case's time
        var policy = ValidationPolicy.webPKI
        let peerName = try? LimboRunner.peerName(of: testCase)
        if peerName == nil { policy.checksPeerName = false }
        // The suite's anchors stand for the system roots these chains end at in browsers.
        policy.certificateTransparency = CertificateTransparencyPolicy(mode: .enforce, logList: list, appliesToCustomAnchors: true)
        let trust = ServerTrust(presentedChain: [leaf] + intermediates, peerName: peerName ?? nil, evaluationTime: time)
        let decision = await PathValidator(anchors: .only(trusted), policy: policy).evaluate(trust)
        return CaseOutcome(expectedSuccess: expectsSCTs, trusted: decision.isTrusted, reasons: decision.reasons.map(\.description))
    }
}

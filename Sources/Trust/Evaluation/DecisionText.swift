import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How the `trust` tool words a ``TrustDecision`` for people: `trust evaluate`'s report, `trust inspect`'s
/// certificate blocks, path line and plain-words verdict. Here rather than in the executable so that tests
/// and the fuzzer (`Fuzz/Sources/FuzzDisplayText`) reach every rendering.
///
/// Every text a certificate (or a CRL, an OCSP responder, a CT log list) chose goes in through
/// ``DisplayText`` interpolation, escaped; reason descriptions are display text already and go in as
/// they are. So no line holds a raw control or bidirectional formatting character (``DisplayText``).
package enum DecisionText {
    /// `trust evaluate`'s report: decision, policy, peer name, time, reasons, notes, pins, the validated (or
    /// closest) path and the presented chain.
    package static func report(_ decision: TrustDecision) -> String {
        var out = ""
        out += DisplayText("decision: \(escaped: decision.isTrusted ? "TRUSTED" : "NOT TRUSTED")\n").description
        out += DisplayText("policy: \(decision.policy)\n").description
        out += DisplayText("peer name: \(decision.peerName?.description ?? "(not checked)")\n").description
        out += DisplayText("evaluated at: \(RFC3339.string(decision.evaluationTime))\n").description
        if !decision.reasons.isEmpty {
            out += "reasons:\n"
            for reason in decision.reasons { out += DisplayText("  - [\(reason.code)] \(escaped: reason.description)\n").description }
        }
        for note in decision.notes { out += DisplayText("note: \(note)\n").description }
        if !decision.expectedPins.isEmpty {
            out += DisplayText("expected pins: \(decision.expectedPins.map(\.description).joined(separator: ", "))\n").description
        }
        if !decision.validatedPath.isEmpty {
            out += "validated path (leaf → anchor):\n" + certificateList(decision.validatedPath)
        } else if !decision.closestPath.isEmpty {
            out += "closest path examined:\n" + certificateList(decision.closestPath)
        }
        out += "presented chain:\n" + certificateList(decision.presentedChain)
        return out
    }

    /// Each certificate in three or four lines: subject; issuer, key and validity; names; pin.
    package static func certificateList(_ certificates: [Certificate]) -> String {
        certificates.enumerated().map { index, certificate in
            let summary = CertificateSummary(certificate)
            var lines = DisplayText("  \(index): \(summary.subject)\n").description
            lines +=
                DisplayText(
                    "     issuer \(summary.issuer); \(summary.key); valid \(RFC3339.string(summary.notBefore)) … \(RFC3339.string(summary.notAfter))\n"
                ).description
            if let sans = summary.subjectAlternativeNames { lines += DisplayText("     names: \(sans.joined(separator: ", "))\n").description }
            lines += DisplayText("     \(summary.pin)\n").description
            return lines
        }.joined()
    }

    /// `trust inspect`'s block for one presented certificate (`validity` is the days-left text, coloured or not).
    package static func inspectedCertificate(_ certificate: Certificate, index: Int, validity: String) -> [String] {
        let summary = CertificateSummary(certificate)
        let names = summary.subjectAlternativeNames.map { $0.isEmpty ? "(none)" : $0.joined(separator: ", ") } ?? "(no subjectAltName extension)"
        return [
            DisplayText("  \(index): \(summary.subject)").description,
            DisplayText("     issuer:    \(summary.issuer)").description,
            DisplayText("     valid:     \(RFC3339.string(summary.notBefore)) → \(RFC3339.string(summary.notAfter)) (\(escaped: validity))").description,
            DisplayText("     names:     \(names)").description,
            DisplayText("     key:       \(summary.key); signature \(summary.signatureAlgorithm)").description,
            DisplayText("     pin:       \(summary.pin)").description,
            DisplayText("     sha256:    \(summary.sha256Fingerprint)").description,
        ]
    }

    /// `validated path: A → B → C`, or `validated path: none (closest: …)`.
    package static func pathLine(_ decision: TrustDecision) -> String {
        func subjects(_ path: [Certificate]) -> String { DisplayText.escaped(path.map { $0.subject.description }.joined(separator: " → ")) }
        if decision.validatedPath.isEmpty {
            return "validated path: none" + (decision.closestPath.isEmpty ? "" : " (closest: " + subjects(decision.closestPath) + ")")
        }
        return "validated path: " + subjects(decision.validatedPath)
    }

    /// What went wrong in plain words, each with the likely fix (`trust inspect`; `presented` is the chain
    /// the server sent, `name` the name checked): each reason's ``TrustFailureReason/explanation``, with the
    /// `trust` option that applies its fix, and for a pin mismatch the key one would pin.
    package static func explanation(_ decision: TrustDecision, presented: [Certificate], name: String) -> [String] {
        guard !decision.isTrusted else { return [DisplayText("trusted: the chain validates to a trusted anchor and holds the name \(name)").description] }
        var lines: [String] = []
        for reason in decision.reasons {
            if case .noPathToTrustedAnchor(.everyCandidateFailed) = reason.detail { continue }  // the other reasons say which
            var line = reason.explanation.description
            switch reason.detail {
            case .noPathToTrustedAnchor(.selfSignedLeaf), .noPathToTrustedAnchor(.untrustedRoot), .noPathToTrustedAnchor(.missingIssuer),
                .noPathToTrustedAnchor(.issuerNotTrusted):
                line += " With trust: --cacert FILE adds an anchor."
            case .pinMismatch:
                // The path that validated apart from the pins: its issuing CA is what one would pin — never a
                // certificate merely appended to the presented chain.
                let path = decision.validatedPath.isEmpty ? decision.closestPath : decision.validatedPath
                if let issuer = path.count > 1 ? path[1] : path.first ?? presented.first {
                    line += DisplayText(" The issuing CA's key: \(issuer.spkiPin) (\(issuer.subject)).").description
                }
            default:
                break
            }
            lines.append(line)
        }
        return lines
    }
}

import Foundation
import X509

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
            lines += DisplayText(
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
    /// the server sent, `name` the name checked).
    package static func explanation(_ decision: TrustDecision, presented: [Certificate], name: String) -> [String] {
        guard !decision.isTrusted else { return [DisplayText("trusted: the chain validates to a trusted anchor and holds the name \(name)").description] }
        var lines: [DisplayText] = []
        for reason in decision.reasons {
            switch reason {
            case .noPathToTrustedAnchor(let detail):
                switch detail {
                case .selfSignedLeaf(let subject):
                    lines.append("self-signed: \(subject) signed itself. Fix: give the server a certificate from a CA, or trust this exact certificate (--cacert it) or pin it.")
                case .untrustedRoot(let subject):
                    lines.append("unknown root: the chain ends at \(subject), which you do not trust. Fix: if you trust that CA, add its certificate (--cacert FILE).")
                case .missingIssuer(let issuer, let of):
                    lines.append("incomplete chain or unknown CA: \(of) was issued by \(issuer), which the server did not send and you do not trust. Fix: if \(issuer) is an intermediate, configure the server to send it after its certificate; if it is a root, add it with --cacert.")
                case .issuerNotTrusted(let issuer, let of):
                    lines.append("unknown root: \(of) is issued by \(issuer), which is not among your anchors. Fix: add \(issuer)'s certificate with --cacert if you trust it.")
                case .badSignature(let subject):
                    lines.append("bad signature: \(subject)'s signature does not verify with its issuer's key — the chain was tampered with or mixed up.")
                case .everyCandidateFailed:
                    continue
                }
            case .nameMismatch(let expected, let names):
                lines.append("name mismatch: the certificate does not hold \(expected); it holds \(names.isEmpty ? "no names" : names.joined(separator: ", ")). Fix: connect with one of those names, or get a certificate that includes \(expected).")
            case .expired(let subject, let notAfter, let at):
                let days = Int(at.timeIntervalSince(notAfter) / 86_400)
                lines.append("expired: \(subject) expired on \(RFC3339.string(notAfter)) (\(days) day\(escaped: days == 1 ? "" : "s") ago). Fix: renew it on the server (or check this machine's clock).")
            case .notYetValid(let subject, let notBefore, _):
                lines.append("not yet valid: \(subject) is valid from \(RFC3339.string(notBefore)). Fix: check this machine's clock, or the server's certificate dates.")
            case .pinMismatch(let seen, let expected):
                // The path that validated apart from the pins: its issuing CA is what one would pin — never a
                // certificate merely appended to the presented chain.
                let path = decision.validatedPath.isEmpty ? decision.closestPath : decision.validatedPath
                let suggestion = (path.count > 1 ? path[1] : path.first ?? presented.first).map { "\($0.spkiPin) (\($0.subject))" } ?? "?"
                lines.append("pin mismatch: pins on the path that validates: \(seen.map(\.description).joined(separator: ", ")); expected one of: \(expected.map(\.description).joined(separator: ", ")). A pinned key that was only appended to the presented chain does not count. Fix: if this server is genuine, pin the key of the CA that issued its certificate — \(suggestion) — plus a backup pin; if not, this is the interception pinning exists to stop.")
            case .weakKey(let subject, let key, let minimum):
                lines.append("weak key: \(subject) has a \(key) key; at least \(minimum) is required. Fix: reissue the certificate with a stronger key.")
            case .weakSignatureAlgorithm(let subject, let algorithm):
                lines.append("weak signature: \(subject) is signed with \(algorithm). Fix: reissue it signed with SHA-256 or better.")
            default:
                lines.append("\(reason.code): \(escaped: reason.description)")
            }
        }
        return lines.map(\.description)
    }
}

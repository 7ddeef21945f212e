import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What revocation checking found for one certificate of a path, for reports (`trust inspect`) — the same finding
/// the revocation rule decides on.
public struct RevocationStatus: Sendable, Hashable {
    /// The finding.
    public enum State: Sendable, Hashable {
        /// A usable CRL that covers every reason does not list it, or a usable OCSP response says good.
        case good
        /// A usable CRL lists it, or a usable OCSP response says revoked (the entry then holds the response's time and reason).
        case revoked(CertificateRevocationList.Entry)
        /// Its status could not be established.
        case unknown
        /// Not checked: the anchor, a short-lived leaf, or outside the policy's depth.
        case notChecked
    }

    /// The certificate's subject, as text.
    public var subject: String
    /// The finding.
    public var state: State
    /// Its source or reason in words: the CRLs or OCSP responses (issuer or responder, `thisUpdate`, `nextUpdate`), why
    /// none could be used, or why the certificate was not checked.
    public var detail: String

    /// A status.
    package init(subject: String, state: State, detail: String) {
        self.subject = subject
        self.state = state
        self.detail = detail
    }
}

extension RevocationPolicy {
    /// The status of each certificate of `path` (leaf first, anchor last) at `time`, as revocation checking under this
    /// policy finds it. With mode `off` every certificate is reported not checked.
    package func statuses(of path: [Certificate], at time: Date = Date()) -> [RevocationStatus] {
        let candidate = CertificatePath(path)
        let rule = RevocationRule(policy: self)
        let checked = checkedPositions(in: path)
        return path.enumerated().map { position, certificate in
            let subject = certificate.displayName
            guard checked.contains(position) else {
                let why: String
                if mode == .off {
                    why = "revocation checking is off"
                } else if position == path.count - 1 {
                    why = "the anchor is trusted as configured"
                } else if position > 0 {
                    why = "only the leaf is checked (depth leaf)"
                } else {
                    why = "a short-lived certificate (valid 7 days or less) is exempt"
                }
                return RevocationStatus(subject: subject, state: .notChecked, detail: why)
            }
            switch rule.status(of: candidate, at: position, time: time) {
            case .good(let evidence):
                return RevocationStatus(subject: subject, state: .good, detail: evidence.map(\.source).joined(separator: "; "))
            case .revoked(let entry, let source):
                let detail =
                    "revoked at \(RFC3339.string(entry.revocationDate)), reason \((entry.reason ?? .unspecified).description), according to the \(source)"
                return RevocationStatus(subject: subject, state: .revoked(entry), detail: detail)
            case .unknown(let why):
                return RevocationStatus(subject: subject, state: .unknown, detail: why)
            }
        }
    }
}

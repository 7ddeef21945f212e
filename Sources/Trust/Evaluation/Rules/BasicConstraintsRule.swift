import SwiftASN1
import X509

/// RFC 5280 §6.1.4 (k), (l), (m): every certificate that issues another on the path must
/// be a v3 CA certificate, and no CA's pathLenConstraint may be exceeded (self-issued
/// intermediates do not count). In the Web-PKI profile, the leaf must not be a CA.
package struct BasicConstraintsRule: PathRule {
    /// Refuse a CA certificate as the leaf (CA/Browser Forum; rfc5280 alone allows it).
    package var forbidsCAAsLeaf: Bool

    /// Creates the rule; `forbidsCAAsLeaf` refuses a CA certificate as the leaf.
    package init(forbidsCAAsLeaf: Bool = true) {
        self.forbidsCAAsLeaf = forbidsCAAsLeaf
    }

    /// This rule enforces basicConstraints.
    package var handledCriticalExtensions: [ASN1ObjectIdentifier] { [.X509ExtensionID.basicConstraints] }

    /// The reasons `path` fails this rule; empty when it passes.
    package func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        var reasons: [TrustFailureReason] = []
        let certificates = path.certificates
        if forbidsCAAsLeaf, certificates.count > 1 || !path.endsAtAnchor {
            switch path.facts[0].basicConstraints {
            case .success(.isCertificateAuthority?):
                reasons.append(.leafIsCertificateAuthority(subject: certificates[0].displayName))
            case .failure(let error):
                reasons.append(.malformedCertificate(subject: certificates[0].displayName, detail: "basicConstraints: \(error)"))
            default:
                break
            }
        }
        for index in path.issuerIndices {
            let constraints: BasicConstraints?
            do {
                constraints = try path.facts[index].basicConstraints.get()
            } catch {
                reasons.append(.malformedCertificate(subject: certificates[index].displayName, detail: "basicConstraints: \(error)"))
                continue
            }
            guard case .isCertificateAuthority(let maxPathLength)? = constraints, certificates[index].version == .v3 else {
                reasons.append(.issuerNotCertificateAuthority(subject: certificates[index].displayName))
                continue
            }
            if let maxPathLength {
                // Intermediates strictly between this CA and the leaf that are not self-issued.
                let below = path.facts[1..<index].filter { !$0.isSelfIssued }.count
                if below > maxPathLength {
                    reasons.append(.pathLengthConstraintViolated(subject: certificates[index].displayName, maxPathLength: maxPathLength))
                }
            }
        }
        return reasons
    }
}

import SwiftASN1
import X509

/// Structural requirements of RFC 5280 and the CA/B Forum profile that a lenient parser lets
/// through, each a sign of a certificate nobody should rely on:
/// - serial numbers are non-zero and at most 20 octets (§4.1.2.2);
/// - a CA has a non-empty subject and a *critical* basicConstraints extension (§4.1.2.6, §4.2.1.9);
/// - the leaf's subjectAltName is critical exactly when its subject is empty (§4.2.1.6);
/// - an authorityInformationAccess extension is well formed and not empty;
/// - a CA's policyConstraints extension is critical (§4.2.1.11);
/// - the leaf's extendedKeyUsage is not critical (CA/B Forum 7.1.2.7).
public struct CertificateProfileRule: PathRule {
    /// Creates the rule.
    public init() {}

    static let policyConstraints: ASN1ObjectIdentifier = [2, 5, 29, 36]

    /// The reasons `path` fails this rule; empty when it passes.
    public func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        var reasons: [TrustFailureReason] = []
        let anchorOnly = path.count == 1 && path.endsAtAnchor
        for (index, certificate) in path.certificates.enumerated() {
            var name: String { certificate.displayName }
            if !path.isAnchor(index) || anchorOnly {
                let serial = certificate.serialNumber.bytes
                if serial.count > 20 {
                    reasons.append(.malformedCertificate(subject: name, detail: "the serial number is longer than 20 octets"))
                } else if serial.allSatisfy({ $0 == 0 }) {
                    reasons.append(.malformedCertificate(subject: name, detail: "the serial number is zero"))
                }
                if let aia = certificate.extensions[oid: .X509ExtensionID.authorityInformationAccess] {
                    let parsed = try? AuthorityInformationAccess(aia)
                    if parsed == nil || parsed?.isEmpty == true {
                        reasons.append(.malformedCertificate(subject: name, detail: "a malformed authorityInformationAccess extension"))
                    }
                }
            }
            if index > 0 {
                if certificate.subject.isEmpty {
                    reasons.append(.malformedCertificate(subject: name, detail: "a CA certificate with an empty subject"))
                }
                if let bc = certificate.extensions[oid: .X509ExtensionID.basicConstraints], !bc.critical {
                    reasons.append(.malformedCertificate(subject: name, detail: "a CA certificate whose basicConstraints is not critical"))
                }
                if let pc = certificate.extensions[oid: Self.policyConstraints], !pc.critical {
                    reasons.append(.malformedCertificate(subject: name, detail: "a CA certificate whose policyConstraints is not critical"))
                }
            }
        }
        if !anchorOnly, let eku = path.leaf.extensions[oid: .X509ExtensionID.extendedKeyUsage], eku.critical {
            reasons.append(.malformedCertificate(subject: path.leaf.displayName, detail: "the extendedKeyUsage of an end-entity certificate is critical"))
        }
        if !anchorOnly, let san = path.leaf.extensions[oid: .X509ExtensionID.subjectAlternativeName] {
            if path.leaf.subject.isEmpty && !san.critical {
                reasons.append(.malformedCertificate(subject: path.leaf.displayName, detail: "the subject is empty but the subjectAltName is not critical"))
            } else if !path.leaf.subject.isEmpty && san.critical {
                reasons.append(.malformedCertificate(subject: path.leaf.displayName, detail: "the subjectAltName is critical although the subject is not empty"))
            }
        }
        return reasons
    }
}

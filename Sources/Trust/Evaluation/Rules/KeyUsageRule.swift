import SwiftASN1
import X509

/// RFC 5280 §4.2.1.3: a CA whose keyUsage extension is present must assert keyCertSign to
/// issue certificates. A leaf's keyUsage, when present, must allow digital signatures or key
/// encipherment (what a TLS handshake uses), and must not claim keyCertSign without being a CA.
package struct KeyUsageRule: PathRule {
    /// Creates the rule.
    package init() {}

    /// This rule enforces keyUsage.
    package var handledCriticalExtensions: [ASN1ObjectIdentifier] { [.X509ExtensionID.keyUsage] }

    /// The reasons `path` fails this rule; empty when it passes.
    package func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        var reasons: [TrustFailureReason] = []
        for index in path.issuerIndices {
            do {
                if let usage = try path.facts[index].keyUsage.get(), !usage.keyCertSign {
                    reasons.append(.issuerKeyUsageForbidsCertificateSigning(subject: path.certificates[index].displayName))
                }
            } catch {
                reasons.append(.malformedCertificate(subject: path.certificates[index].displayName, detail: "keyUsage: \(error)"))
            }
        }
        if path.count == 1 && path.endsAtAnchor { return reasons }
        var leaf: Certificate { path.leaf }
        do {
            if let usage = try path.facts[0].keyUsage.get() {
                if !(usage.digitalSignature || usage.keyEncipherment || usage.keyAgreement) {
                    reasons.append(.leafKeyUsageInvalid(subject: leaf.displayName, detail: "keyUsage allows neither digitalSignature nor keyEncipherment"))
                }
                if usage.keyCertSign && !path.facts[0].isCertificateAuthority {
                    reasons.append(.leafKeyUsageInvalid(subject: leaf.displayName, detail: "keyUsage asserts keyCertSign but the certificate is not a CA"))
                }
            }
        } catch {
            reasons.append(.malformedCertificate(subject: leaf.displayName, detail: "keyUsage: \(error)"))
        }
        return reasons
    }
}

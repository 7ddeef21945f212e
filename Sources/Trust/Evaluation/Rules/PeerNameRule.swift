import SwiftASN1
import X509

/// The leaf must hold the expected peer name in its subjectAltName: a dNSName per RFC 6125
/// (see ``HostnameMatcher``) or an iPAddress equal byte for byte. The subject common name
/// is never consulted (a CN fallback also slips past name constraints).
package struct PeerNameRule: PathRule {
    /// How dNSName entries are matched against the peer name.
    package var matcher: HostnameMatcher

    /// Creates the rule with the given matcher.
    package init(matcher: HostnameMatcher = HostnameMatcher()) {
        self.matcher = matcher
    }

    /// This rule enforces subjectAltName.
    package var handledCriticalExtensions: [ASN1ObjectIdentifier] { [.X509ExtensionID.subjectAlternativeName] }

    /// The reasons `path` fails this rule; empty when it passes.
    package func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        guard let peerName = context.peerName else { return [.peerNameRequired] }
        var leaf: Certificate { path.leaf }
        switch path.facts[0].subjectAlternativeNames {
        case .failure(let error):
            return [.malformedCertificate(subject: leaf.displayName, detail: "subjectAltName: \(error)")]
        case .success(nil):
            return [.missingSubjectAlternativeName(subject: leaf.displayName)]
        case .success:
            break
        }
        if Self.matches(path.facts[0], peerName, matcher: matcher) { return [] }
        return [.nameMismatch(expected: peerName.description, presented: leaf.subjectAlternativeNameStrings ?? [])]
    }

    /// Matches the leaf's subjectAltName entries as ``CertificateFacts`` keeps them (dNSNames
    /// already normalised, iPAddress octets).
    static func matches(_ facts: CertificateFacts, _ peerName: PeerName, matcher: HostnameMatcher) -> Bool {
        switch peerName {
        case .dnsName(let host):
            return facts.presentedDNSNames.contains { $0.map { matcher.matches(normalised: $0, host: host) } ?? false }
        case .ipAddress(let ip):
            return facts.presentedIPAddresses.contains { $0 == ip.bytes }
        }
    }
}

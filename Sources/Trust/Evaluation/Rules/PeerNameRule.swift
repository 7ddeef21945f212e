import SwiftASN1
import X509

/// The leaf must hold the expected peer name in its subjectAltName: a dNSName per RFC 6125
/// (see ``HostnameMatcher``) or an iPAddress equal byte for byte. The subject common name
/// is never consulted (a CN fallback also slips past name constraints).
public struct PeerNameRule: PathRule {
    /// How dNSName entries are matched against the peer name.
    public var matcher: HostnameMatcher

    /// Creates the rule with the given matcher.
    public init(matcher: HostnameMatcher = HostnameMatcher()) {
        self.matcher = matcher
    }

    /// This rule enforces subjectAltName.
    public var handledCriticalExtensions: [ASN1ObjectIdentifier] { [.X509ExtensionID.subjectAlternativeName] }

    /// The reasons `path` fails this rule; empty when it passes.
    public func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        guard let peerName = context.peerName else { return [.peerNameRequired] }
        var leaf: Certificate { path.leaf }
        let sans: SubjectAlternativeNames?
        do {
            sans = try path.facts[0].subjectAlternativeNames.get()
        } catch {
            return [.malformedCertificate(subject: leaf.displayName, detail: "subjectAltName: \(error)")]
        }
        guard let sans else { return [.missingSubjectAlternativeName(subject: leaf.displayName)] }
        if Self.matches(sans, peerName, matcher: matcher) { return [] }
        return [.nameMismatch(expected: peerName.description, presented: leaf.subjectAlternativeNameStrings ?? [])]
    }

    static func matches(_ sans: SubjectAlternativeNames, _ peerName: PeerName, matcher: HostnameMatcher) -> Bool {
        for name in sans {
            switch (name, peerName) {
            case (.dnsName(let presented), .dnsName(let host)):
                if matcher.matches(presented: presented, host: host) { return true }
            case (.ipAddress(let octets), .ipAddress(let ip)):
                if Array(octets.bytes) == ip.bytes { return true }
            default:
                continue
            }
        }
        return false
    }
}

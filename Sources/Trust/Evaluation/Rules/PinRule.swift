import X509

/// At least one certificate on the validated path must have one of the pinned public keys.
///
/// Because this runs as a rule inside the path search, a pinned certificate that an
/// attacker merely *appends* to the chain it presents can never satisfy it: only
/// certificates on a path that validates are looked at.
package struct PinRule: PathRule {
    /// The accepted SPKI pins; one must be on the path.
    package var pins: Set<SPKIPin>

    /// Creates the rule with the given pins.
    package init(pins: Set<SPKIPin>) {
        self.pins = pins
    }

    /// The reasons `path` fails this rule; empty when it passes. A partial path is not judged.
    package func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        guard path.endsAtAnchor else { return [] }
        if path.facts.contains(where: { pins.contains($0.spkiPin) }) { return [] }
        let seen = path.facts.map(\.spkiPin)
        return [.pinMismatch(seen: seen, expected: pins.sorted { $0.base64 < $1.base64 })]
    }
}

/// At least one certificate on the validated path must be (byte for byte) one of the given certificates.
package struct PinnedCertificateRule: PathRule {
    /// The accepted certificates; one must be on the path.
    package var certificates: [Certificate]

    /// Creates the rule with the given certificates.
    package init(certificates: [Certificate]) {
        self.certificates = certificates
    }

    /// The reasons `path` fails this rule; empty when it passes. A partial path is not judged.
    package func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        guard path.endsAtAnchor else { return [] }
        if path.certificates.contains(where: certificates.contains) { return [] }
        return [.pinnedCertificateNotInPath(pinned: certificates.map(\.displayName))]
    }
}

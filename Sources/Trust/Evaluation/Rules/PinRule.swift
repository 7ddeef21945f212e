import X509

/// At least one certificate on the validated path must have one of the pinned public keys.
///
/// Because this runs as a rule inside the path search, a pinned certificate that an
/// attacker merely *appends* to the chain it presents can never satisfy it: only
/// certificates on a path that validates are looked at (pitfall 1).
public struct PinRule: PathRule {
    public var pins: Set<SPKIPin>

    public init(pins: Set<SPKIPin>) {
        self.pins = pins
    }

    public func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        guard path.endsAtAnchor else { return [] }
        let seen = path.certificates.map(\.spkiPin)
        if seen.contains(where: pins.contains) { return [] }
        return [.pinMismatch(seen: seen, expected: pins.sorted { $0.base64 < $1.base64 })]
    }
}

/// At least one certificate on the validated path must be (byte for byte) one of the given certificates.
public struct PinnedCertificateRule: PathRule {
    public var certificates: [Certificate]

    public init(certificates: [Certificate]) {
        self.certificates = certificates
    }

    public func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        guard path.endsAtAnchor else { return [] }
        if path.certificates.contains(where: certificates.contains) { return [] }
        return [.pinnedCertificateNotInPath(pinned: certificates.map(\.displayName))]
    }
}

import X509

/// A validator's anchors by subject, built once per validator: its custom anchors indexed up
/// front, the system roots (when included) through ``SystemRootIndex`` — read at the first lookup,
/// not when the validator is made, and each root parsed only when it is looked up.
struct AnchorIndex: Sendable {
    private let custom: [DistinguishedName: [Certificate]]
    private let includesSystemRoots: Bool
    private var system: SystemRootIndex? { includesSystemRoots ? SystemRootIndex.shared : nil }

    init(_ anchors: TrustAnchors) {
        ConstructionCounter.anchorIndexes.increment()
        self.custom = BudgetedCertificateStore.index(anchors.certificates)
        self.includesSystemRoots = anchors.includesSystemRoots
    }

    /// The anchors named `subject`: custom ones first, then system roots not already among them.
    subscript(subject: DistinguishedName) -> [Certificate]? {
        let mine = custom[subject] ?? []
        guard let system else { return mine.isEmpty ? nil : mine }
        let roots = system.certificates(subject: subject).filter { !mine.contains($0) }
        let all = mine + roots
        return all.isEmpty ? nil : all
    }

    /// Whether `certificate` is an anchor.
    func contains(_ certificate: Certificate) -> Bool {
        (custom[certificate.subject]?.contains(certificate) ?? false) || (system?.contains(certificate) ?? false)
    }
}

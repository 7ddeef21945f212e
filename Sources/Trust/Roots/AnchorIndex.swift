import X509

/// A validator's anchors by subject, built once per validator: its custom anchors indexed up
/// front, the public roots (when included) through their ``SystemRootIndex`` — the system bundle's read at the
/// first lookup, not when the validator is made, and each root parsed only when it is looked up.
struct AnchorIndex: Sendable {
    private let custom: [DistinguishedName: [Certificate]]
    private let includesSystemRoots: Bool
    private let store: RootStore

    init(_ anchors: TrustAnchors) {
        ConstructionCounter.anchorIndexes.increment()
        self.custom = BudgetedCertificateStore.index(anchors.certificates)
        self.includesSystemRoots = anchors.includesSystemRoots
        self.store = anchors.rootStore
    }

    /// The public roots named `subject`, Mozilla's first, each distinct root once.
    private func publicRoots(subject: DistinguishedName) -> [Certificate] {
        guard includesSystemRoots else { return [] }
        var roots = store.includesMozilla ? MozillaRootStore.shared.index.certificates(subject: subject) : []
        if store.includesSystem {
            for root in SystemRootIndex.shared.certificates(subject: subject) where !roots.contains(root) { roots.append(root) }
        }
        return roots
    }

    /// The anchors named `subject`: custom ones first, then public roots not already among them.
    subscript(subject: DistinguishedName) -> [Certificate]? {
        let mine = custom[subject] ?? []
        guard includesSystemRoots else { return mine.isEmpty ? nil : mine }
        let roots = publicRoots(subject: subject).filter { !mine.contains($0) }
        let all = mine + roots
        return all.isEmpty ? nil : all
    }

    /// Whether `certificate` is an anchor.
    func contains(_ certificate: Certificate) -> Bool {
        (custom[certificate.subject]?.contains(certificate) ?? false) || publicRoots(subject: certificate.subject).contains(certificate)
    }
}

import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// NSS's refusals, applied to a path that ends at a public root (see ``RootStore``): a root Mozilla's store lists
/// without server trust anchors nothing, and a root with a server distrust-after date anchors only chains whose
/// leaf's `notBefore` is not later than that date — NSS compares the end-entity certificate's `notBefore`
/// (Firefox's `CKA_NSS_SERVER_DISTRUST_AFTER` check). Custom anchors are the application's choice and are exempt.
///
/// On a trusted path that ends at a root of the system bundle that NSS does not list, it notes so: such a root may be
/// an administrator's own CA or one Mozilla removed, and only the administrator can tell.
package struct MozillaRootRule: PathRule {
    /// Called each time a path ends at a public root, and never when the rule is made: a validator that is made and
    /// never asked about a public root (the default evaluator of a configuration whose evaluator is then replaced)
    /// costs no reading of the embedded store's 300 KB. The default, `.shared`, is read once per process.
    private let store: @Sendable () -> MozillaRootStore
    private let customAnchors: Set<Certificate>

    /// The rule for a validator whose custom anchors are `customAnchors`, with NSS's facts from `store` (the
    /// embedded store unless given).
    package init(customAnchors: Set<Certificate>, store: @escaping @Sendable () -> MozillaRootStore = { .shared }) {
        self.customAnchors = customAnchors
        self.store = store
    }

    /// The public root the path ends at, with what NSS says about it (`nil`: NSS does not list it).
    private func publicAnchor(of path: CertificatePath) -> (root: Certificate, entry: MozillaRootEntry?)? {
        guard path.endsAtAnchor, let index = path.certificates.indices.last, !customAnchors.contains(path.certificates[index]) else { return nil }
        return (path.certificates[index], store().entry(for: path.certificates[index], spki: path.facts[index].spkiPin))
    }

    package func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        guard let (root, entry) = publicAnchor(of: path), let entry else { return [] }
        switch entry.serverTrust {
        case .notTrusted: return [.rootDistrusted(root: root.displayName, label: entry.label, rule: .notTrustedForServers)]
        case .distrusted: return [.rootDistrusted(root: root.displayName, label: entry.label, rule: .distrusted)]
        case .trusted: break
        }
        // A root that is its own leaf has issued nothing: the date applies to the certificates it issued.
        if let after = entry.serverDistrustAfter, path.count > 1, path.facts[0].notValidBefore > after {
            return [
                .rootDistrusted(
                    root: root.displayName, label: entry.label,
                    rule: .issuedAfterDistrustDate(distrustAfter: after, leafNotBefore: path.facts[0].notValidBefore))
            ]
        }
        return []
    }

    package var observesTrustedPaths: Bool { true }

    package func observe(_ path: CertificatePath, context: RuleContext) -> PathObservation {
        guard let (root, entry) = publicAnchor(of: path), entry == nil else { return PathObservation() }
        return PathObservation(notes: [
            DisplayText("the path ends at \(root.displayName), a root of the system bundle that Mozilla's root store does not list").description
        ])
    }
}

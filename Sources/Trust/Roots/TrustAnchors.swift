import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The certificates a path may end at.
///
/// Either the public roots (a ``RootStore``: the machine's bundle and Mozilla's store by default), custom anchors
/// *added* to them, or custom anchors *only* (the public roots replaced). Any certificate can be an anchor: a root,
/// an intermediate (the path then stops there), or a server's own leaf (for pinning a self-signed server).
public struct TrustAnchors: Sendable, Hashable {
    /// Whether the public roots (``rootStore``) are part of the anchors.
    public var includesSystemRoots: Bool
    /// Which public roots, when ``includesSystemRoots``: ``RootStore/default`` unless chosen.
    public var rootStore: RootStore
    /// Custom anchors.
    public var certificates: [Certificate]

    /// Creates an anchor set.
    public init(includesSystemRoots: Bool, certificates: [Certificate], rootStore: RootStore = .default) {
        self.includesSystemRoots = includesSystemRoots
        self.certificates = certificates
        self.rootStore = rootStore
    }

    /// The public roots of the default store (``RootStore/default``).
    public static let system = TrustAnchors(includesSystemRoots: true, certificates: [])

    /// The public roots of `store`, plus `certificates`.
    public static func system(adding certificates: [Certificate], store: RootStore = .default) -> TrustAnchors {
        TrustAnchors(includesSystemRoots: true, certificates: certificates, rootStore: store)
    }

    /// The public roots of `store`.
    public static func roots(_ store: RootStore) -> TrustAnchors {
        TrustAnchors(includesSystemRoots: true, certificates: [], rootStore: store)
    }

    /// Only `certificates` ("anchors only").
    public static func only(_ certificates: [Certificate]) -> TrustAnchors {
        TrustAnchors(includesSystemRoots: false, certificates: certificates)
    }

    /// Every anchor certificate, public roots included.
    package var allCertificates: [Certificate] {
        includesSystemRoots ? rootStore.certificates + certificates : certificates
    }

    /// Why no public root can anchor a path, when none was found; `nil` when the store holds roots (Mozilla's always
    /// does).
    package var missingRootsNote: String? {
        includesSystemRoots && !rootStore.includesMozilla ? SystemRoots.missingNote : nil
    }
}

extension RootStore {
    /// Every root of the store, parsed (each distinct root once).
    package var certificates: [Certificate] {
        var roots = includesMozilla ? MozillaRoots.certificates : []
        if includesSystem {
            let known = Set(roots)
            roots += SystemRoots.certificates.filter { !known.contains($0) }
        }
        return roots
    }
}

import Foundation
import X509

/// The certificates a path may end at.
///
/// Either the system's roots, custom anchors *added* to them, or custom anchors *only*
/// (the system set replaced). Any certificate can be an anchor: a root, an intermediate
/// (the path then stops there), or a server's own leaf (for pinning a self-signed server).
public struct TrustAnchors: Sendable, Hashable {
    /// Whether the system's root store is part of the anchors.
    public var includesSystemRoots: Bool
    /// Custom anchors.
    public var certificates: [Certificate]

    /// Creates an anchor set.
    public init(includesSystemRoots: Bool, certificates: [Certificate]) {
        self.includesSystemRoots = includesSystemRoots
        self.certificates = certificates
    }

    /// The system's roots.
    public static let system = TrustAnchors(includesSystemRoots: true, certificates: [])

    /// The system's roots plus `certificates`.
    public static func system(adding certificates: [Certificate]) -> TrustAnchors {
        TrustAnchors(includesSystemRoots: true, certificates: certificates)
    }

    /// Only `certificates` ("anchors only").
    public static func only(_ certificates: [Certificate]) -> TrustAnchors {
        TrustAnchors(includesSystemRoots: false, certificates: certificates)
    }

    /// Every anchor certificate, system roots included.
    public var allCertificates: [Certificate] {
        includesSystemRoots ? SystemRoots.certificates + certificates : certificates
    }
}

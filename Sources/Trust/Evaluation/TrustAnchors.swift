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

/// The operating system's root certificates, read once.
public enum SystemRoots {
    /// Bundle files tried in order (Debian/Ubuntu, Fedora/RHEL, Alpine/macOS, SUSE).
    public static let bundlePaths = [
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/ssl/cert.pem",
        "/etc/ssl/ca-bundle.pem",
    ]

    /// The system roots; empty when no bundle is installed (see ``bundlePath``).
    public static let certificates: [Certificate] = {
        guard let path = bundlePath else { return [] }
        // A bundle may hold a certificate swift-certificates cannot parse (e.g. an RSA-PSS key):
        // skip that block instead of losing the whole store.
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        var result: [Certificate] = []
        for block in text.components(separatedBy: "-----END CERTIFICATE-----") where block.contains("-----BEGIN CERTIFICATE-----") {
            if let certs = try? CertificateSource.certificates(pem: block + "-----END CERTIFICATE-----") {
                result += certs
            }
        }
        return result
    }()

    /// The bundle file in use, if any.
    public static let bundlePath: String? = bundlePaths.first { FileManager.default.isReadableFile(atPath: $0) }
}

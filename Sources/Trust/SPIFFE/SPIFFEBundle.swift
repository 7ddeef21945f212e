import X509

/// The X.509 authorities of one SPIFFE trust domain: the certificates an X.509-SVID of that domain must chain to
/// (X509-SVID.md §5.1, the "CA bundle"; SPIFFE-ID.md §3.1: trust is rooted in the ID's trust domain).
public struct SPIFFEBundle: Sendable, Hashable {
    /// The trust domain.
    public let trustDomain: SPIFFETrustDomain
    /// Its X.509 authorities (usually self-signed roots).
    public let anchors: [Certificate]

    /// A bundle from its parts.
    public init(trustDomain: SPIFFETrustDomain, anchors: [Certificate]) {
        self.trustDomain = trustDomain
        self.anchors = anchors
    }

    /// The bundles in a PEM (or DER) file or a folder of them.
    ///
    /// With `trustDomain`, every certificate belongs to it. Without, each certificate's own SPIFFE ID says which
    /// (a signing certificate SHOULD be an SVID of its trust domain, X509-SVID.md §3.2); one without a SPIFFE ID is
    /// an error that names it.
    public static func load(contentsOf path: String, trustDomain: SPIFFETrustDomain? = nil) throws(SPIFFEBundleError) -> [SPIFFEBundle] {
        let certificates: [Certificate]
        do {
            certificates = try CertificateSource.certificates(atPath: path)
        } catch {
            throw .unreadable(error)
        }
        var byDomain: [SPIFFETrustDomain: [Certificate]] = [:]
        for certificate in certificates {
            guard let domain = trustDomain ?? certificate.spiffeID?.trustDomain else {
                throw .noTrustDomain(source: path, subject: certificate.displayName)
            }
            byDomain[domain, default: []].append(certificate)
        }
        return byDomain.keys.sorted().map { SPIFFEBundle(trustDomain: $0, anchors: byDomain[$0] ?? []) }
    }
}

/// Why a SPIFFE bundle could not be read.
public enum SPIFFEBundleError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file could not be read as certificates.
    case unreadable(CertificateLoadingError)
    /// A certificate of `source` has no SPIFFE ID, and no trust domain was given for the file.
    case noTrustDomain(source: String, subject: String)

    /// What went wrong; names and paths escaped.
    public var description: String {
        switch self {
        case .unreadable(let error):
            return DisplayText.escaped(error.description)
        case .noTrustDomain(let source, let subject):
            return DisplayText.escaped(
                "\(source): the certificate \(subject) has no SPIFFE ID (one URI SAN spiffe://TRUST-DOMAIN) to say its trust domain; give the trust domain with the file (TRUST-DOMAIN=FILE)"
            )
        }
    }
}

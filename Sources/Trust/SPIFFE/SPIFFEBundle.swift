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
        return try bundles(of: certificates, source: path, trustDomain: trustDomain)
    }

    /// The bundles `certificates` make, read from `source` (named in an error): as ``load(contentsOf:trustDomain:)``
    /// groups a file's.
    public static func bundles(
        of certificates: [Certificate], source: String, trustDomain: SPIFFETrustDomain? = nil
    ) throws(SPIFFEBundleError) -> [SPIFFEBundle] {
        var byDomain: [SPIFFETrustDomain: [Certificate]] = [:]
        for certificate in certificates {
            guard let domain = trustDomain ?? certificate.spiffeID?.trustDomain else {
                throw .noTrustDomain(source: source, subject: certificate.displayName)
            }
            byDomain[domain, default: []].append(certificate)
        }
        return byDomain.keys.sorted().map { SPIFFEBundle(trustDomain: $0, anchors: byDomain[$0] ?? []) }
    }
}

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

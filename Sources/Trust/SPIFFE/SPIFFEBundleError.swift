/// Why a SPIFFE bundle could not be read.
public struct SPIFFEBundleError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error with its data, for this package's code (cases come in minor versions without breaking a
    /// client, who shows the error: its description says what is wrong).
    package let detail: Detail

    package init(_ detail: Detail) { self.detail = detail }

    /// What went wrong; names and paths escaped.
    public var description: String { detail.description }

    /// The file could not be read as certificates.
    package static func unreadable(_ value0: CertificateLoadingError) -> Self { Self(.unreadable(value0)) }
    /// A certificate of `source` has no SPIFFE ID, and no trust domain was given for the file.
    package static func noTrustDomain(source: String, subject: String) -> Self { Self(.noTrustDomain(source: source, subject: subject)) }
}

extension SPIFFEBundleError {
    /// The cases, exhaustive inside this package.
    package enum Detail: Hashable, Sendable {
        /// The file could not be read as certificates.
        case unreadable(CertificateLoadingError)
        /// A certificate of `source` has no SPIFFE ID, and no trust domain was given for the file.
        case noTrustDomain(source: String, subject: String)

        /// What went wrong; names and paths escaped.
        package var description: String {
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
}

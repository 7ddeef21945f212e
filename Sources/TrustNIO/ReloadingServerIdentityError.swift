import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Why a ``ReloadingServerIdentity`` did not take its files (on its first load, or on a reload, when it keeps the
/// context it had). Names files, never a key.
public struct ReloadingServerIdentityError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error with its data, for this package's code (cases come in minor versions without breaking a
    /// client, who shows the error: its description says what is wrong).
    package let detail: Detail

    package init(_ detail: Detail) { self.detail = detail }

    /// The problem, in words, with file names escaped (`DisplayText`).
    public var description: String { detail.description }

    /// Whether the same files may be taken later without changing (a certificate not yet valid).
    var dependsOnTime: Bool { detail.dependsOnTime }

    /// The certificate chain or its key: the same checks as a client identity's (readable, the key belonging to the
    /// certificate, the certificate within its validity period).
    package static func identity(_ value0: ReloadingClientIdentityError) -> Self { Self(.identity(value0)) }
    /// The client-CA bundle cannot be read or holds no PEM certificate.
    package static func clientCAs(path: String) -> Self { Self(.clientCAs(path: path)) }
    /// The client-CA bundle's PEM certificate at `index` (1 for the first) cannot be parsed: the whole bundle is
    /// refused rather than trusting the others without it.
    package static func clientCACertificate(path: String, index: Int) -> Self { Self(.clientCACertificate(path: path, index: index)) }
    /// With SPIFFE client authentication: a client-CA certificate has no SPIFFE ID to say its trust domain (and more
    /// than one trust domain was trusted).
    package static func spiffeBundle(_ value0: SPIFFEBundleError) -> Self { Self(.spiffeBundle(value0)) }
    /// With SPIFFE client authentication: the bundles the client-CA file makes leave an allowed SPIFFE ID without its
    /// trust domain's bundle (or hold no anchor).
    package static func spiffeConfiguration(path: String, _ value1: SPIFFEConfigurationError) -> Self { Self(.spiffeConfiguration(path: path, value1)) }
    /// NIOSSL refused the configuration made from the files; the detail is its error.
    package static func context(_ value0: String) -> Self { Self(.context(value0)) }
}

extension ReloadingServerIdentityError {
    /// The cases, exhaustive inside this package.
    package enum Detail: Hashable, Sendable {
        /// The certificate chain or its key: the same checks as a client identity's (readable, the key belonging to the
        /// certificate, the certificate within its validity period).
        case identity(ReloadingClientIdentityError)
        /// The client-CA bundle cannot be read or holds no PEM certificate.
        case clientCAs(path: String)
        /// The client-CA bundle's PEM certificate at `index` (1 for the first) cannot be parsed: the whole bundle is
        /// refused rather than trusting the others without it.
        case clientCACertificate(path: String, index: Int)
        /// With SPIFFE client authentication: a client-CA certificate has no SPIFFE ID to say its trust domain (and more
        /// than one trust domain was trusted).
        case spiffeBundle(SPIFFEBundleError)
        /// With SPIFFE client authentication: the bundles the client-CA file makes leave an allowed SPIFFE ID without its
        /// trust domain's bundle (or hold no anchor).
        case spiffeConfiguration(path: String, SPIFFEConfigurationError)
        /// NIOSSL refused the configuration made from the files; the detail is its error.
        case context(String)

        /// The problem, in words, with file names escaped (`DisplayText`).
        package var description: String {
            switch self {
            case .identity(let error): return "the server identity: \(error)"
            case .clientCAs(let path): return "\(DisplayText.escaped(path)): no usable client-CA certificate"
            case .clientCACertificate(let path, let index): return "\(DisplayText.escaped(path)): client-CA certificate \(index) cannot be parsed"
            case .spiffeBundle(let error): return "the client-CA file as SPIFFE bundles: \(error)"
            case .spiffeConfiguration(let path, let error): return "\(DisplayText.escaped(path)) as SPIFFE bundles: \(error)"
            case .context(let detail): return "the TLS context cannot be made: \(DisplayText.escaped(detail))"
            }
        }

        /// Whether the same files may be taken later without changing (a certificate not yet valid).
        var dependsOnTime: Bool {
            if case .identity(let error) = self { return error.dependsOnTime }
            return false
        }
    }
}

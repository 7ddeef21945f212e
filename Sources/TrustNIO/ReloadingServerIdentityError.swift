import Foundation
import Trust

/// Why a ``ReloadingServerIdentity`` did not take its files (on its first load, or on a reload, when it keeps the
/// context it had). Names files, never a key.
public enum ReloadingServerIdentityError: Error, Hashable, Sendable, CustomStringConvertible {
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
    public var description: String {
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

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
    /// NIOSSL refused the configuration made from the files; the detail is its error.
    case context(String)

    /// The problem, in words, with file names escaped (``DisplayText``).
    public var description: String {
        switch self {
        case .identity(let error): return "the server identity: \(error)"
        case .clientCAs(let path): return "\(DisplayText.escaped(path)): no usable client-CA certificate"
        case .context(let detail): return "the TLS context cannot be made: \(DisplayText.escaped(detail))"
        }
    }
}

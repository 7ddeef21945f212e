/// The lowest TLS version a connection accepts: for a whole session (`TrustHTTPClientConfiguration`) or for the hosts
/// of one trust configuration entry (``TrustConfiguration/Entry/minimumTLSVersion``). Nothing below TLS 1.2 is ever
/// offered. A value only: the engine reads it from a configuration file and the module that makes the connection
/// (TrustNIO) applies it.
public enum TLSMinimum: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// TLS 1.2 and 1.3 (the default).
    case tls12 = "1.2"
    /// TLS 1.3 only.
    case tls13 = "1.3"

    /// `1.2` or `1.3`, as the configuration file writes it.
    public var description: String { rawValue }
}

import Trust

/// The lowest TLS version a connection accepts: for a whole session (`TrustHTTPClientConfiguration`) or for the hosts
/// of one trust configuration entry (``Trust/TrustConfiguration/Entry/minimumTLSVersion``). Nothing below TLS 1.2
/// is ever offered.
public enum TLSMinimum: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// TLS 1.2 and 1.3 (the default).
    case tls12 = "1.2"
    /// TLS 1.3 only.
    case tls13 = "1.3"

    /// `1.2` or `1.3`, as the configuration file writes it.
    public var description: String { rawValue }
}

extension TLSMinimum: TrustConfigurationMember {
    package static let name = "minimumTLSVersion"

    package static func read(_ value: JSONValue, at path: String, checker: inout TrustConfiguration.Checker) -> TLSMinimum? {
        guard let text = checker.string(value, path) else { return nil }
        guard let minimum = TLSMinimum(rawValue: text) else {
            checker.problem(path, "must be \"1.2\" or \"1.3\", not \"\(text)\"")
            return nil
        }
        return minimum
    }

    /// The default, TLS 1.2, is not written.
    package static func json(_ value: TLSMinimum) -> JSONValue? {
        value == .tls12 ? nil : .string(value.rawValue)
    }
}

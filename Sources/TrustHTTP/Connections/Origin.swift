import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// scheme + host + port: what connections are pooled by (with the trust key).
struct Origin: Hashable, Sendable, CustomStringConvertible {
    var scheme: String
    var host: String
    var port: Int

    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            var host = url.host, !host.isEmpty
        else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard Self.isAcceptableHost(host) else { return nil }
        // A port outside 1–65535 names no origin (`InvalidPort`; TrustHTTPClient checks the URL's text as well).
        if let port = url.port, !(1...65_535).contains(port) { return nil }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }

    init(scheme: String, host: String, port: Int) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    var isSecure: Bool { scheme == "https" }

    /// No control characters, spaces or delimiters (a decoded `%0D%0A` must never reach a request line).
    static func isAcceptableHost(_ host: String) -> Bool {
        !host.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F || "/?#@\\\"<>{}|^`".unicodeScalars.contains($0) }
    }

    /// `host:port` (brackets around IPv6), the target of a CONNECT.
    var authority: String { "\(host.containsASCII(UInt8(ascii: ":")) ? "[\(host)]" : host):\(port)" }
    var isDefaultPort: Bool { port == (isSecure ? 443 : 80) }

    /// The Host header value.
    var hostHeader: String {
        let name = host.containsASCII(UInt8(ascii: ":")) ? "[\(host)]" : host
        return isDefaultPort ? name : "\(name):\(port)"
    }

    var description: String { "\(scheme)://\(hostHeader)" }
}

/// What a pooled connection is keyed by: never shared across origins or trust configurations.
struct PoolKey: Hashable, Sendable {
    var origin: Origin
    var trustKey: String
    /// The proxy the connection goes through (`http://host:port`), if any.
    var proxy: String? = nil
}

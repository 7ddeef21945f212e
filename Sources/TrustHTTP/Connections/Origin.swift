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

    /// The origin of `url`, its host canonical: lower case, A-labels (`xn--…`), an IP address as ``IPAddress`` writes
    /// it. The canonical form is this package's own (UTS #46, ``PeerName``), not `URL`'s: `URL` maps a host to A-labels
    /// only when full Foundation is linked (FoundationInternationalization's IDNA), and leaves it as typed (Unicode)
    /// with FoundationEssentials alone, so the same URL would otherwise name two origins. A name that cannot be made
    /// canonical is kept lower-cased, and refused before any connection (``nameProblem(_:)``).
    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            var host = url.host(percentEncoded: false), !host.isEmpty
        else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard Self.isAcceptableHost(host) else { return nil }
        // A port outside 1–65535 names no origin (`InvalidPort`; TrustHTTPClient checks the URL's text as well).
        if let port = url.port, !(1...65_535).contains(port) { return nil }
        self.scheme = scheme
        self.host = Self.canonical(host)
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }

    init(scheme: String, host: String, port: Int) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    var isSecure: Bool { scheme == "https" }

    /// `host` lower case with A-labels, or an IP address as ``IPAddress`` writes it; a trailing dot kept (a fully
    /// qualified name, sent as written in `Host`, as curl sends it); as typed, lower-cased, when it is not a name.
    static func canonical(_ host: String) -> String {
        // A dotted quad is its own canonical form: no address is built for it (the request path asks twice per request).
        if IPAddress.isIPv4Text(host) { return host }
        guard let name = try? PeerName(host: host) else { return host.lowercased() }
        if case .dnsName(let text) = name, host.hasSuffix(".") { return text + "." }
        return name.description
    }

    /// Why `url`'s host is not a name a request can go to (UTS #46 and IDNA2008 for a name, RFC 3986 §3.2.2 for an IP
    /// literal), or nil when it is one.
    static func nameProblem(_ url: URL) -> PeerNameError? {
        guard var host = url.host(percentEncoded: false) else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        // A dotted-quad IPv4 address has no problem to find, and reading it as a `PeerName` would allocate its bytes.
        if IPAddress.isIPv4Text(host) { return nil }
        do {
            _ = try PeerName(host: host)
            return nil
        } catch {
            return error
        }
    }

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

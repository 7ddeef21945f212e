import Foundation
import Trust

/// An HTTP proxy: `http` requests go to it in absolute form; `https` requests go through a
/// `CONNECT` tunnel, with TLS — and the session's trust evaluation — end to end with the origin.
public struct ProxyConfiguration: Sendable, CustomStringConvertible {
    /// The proxy's host name or IP address, lowercased.
    public var host: String
    /// The proxy's port.
    public var port: Int
    /// Sent when the proxy asks (407); being configured for this proxy, it may go as Basic over the
    /// proxy's plain-http connection.
    public var credential: Credential?
    /// Hosts reached directly (curl's `NO_PROXY`): `*` for all, `example.com` or `.example.com` for
    /// the domain and its subdomains, IP literals exactly; an entry may end in `:PORT`.
    public var noProxy: [String]

    /// Why a proxy URL cannot be used.
    public enum Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// The text is not a proxy URL (shown without anything up to its last `@`).
        case malformed(String)
        /// The URL's scheme is not `http`.
        case unsupportedScheme(String)

        /// Human-readable form.
        public var description: String {
            switch self {
            case .malformed(let text): return "not a proxy URL: \(text)"
            case .unsupportedScheme(let scheme): return "proxy scheme \(scheme) is not supported (http only)"
            }
        }
    }

    /// A proxy at `host:port` (port 1080 by default, as curl's).
    public init(host: String, port: Int = 1080, credential: Credential? = nil, noProxy: [String] = []) {
        self.host = host.lowercased()
        self.port = port
        self.credential = credential
        self.noProxy = noProxy
    }

    /// `http://[user:password@]host[:port]` (a bare `host:port` means http; the port defaults to 1080, as curl's).
    public init(url text: String, credential: Credential? = nil, noProxy: [String] = []) throws(Problem) {
        let withScheme = text.range(of: "://", options: .literal) != nil ? text : "http://" + text
        guard let url = URL(string: withScheme), let host = url.host, !host.isEmpty, Origin.isAcceptableHost(host) else {
            // Never repeat a password: keep only what follows the last '@', found by byte (a combining
            // mark after it makes one `Character` that is not '@').
            throw .malformed(String(text.lastIndex(ofASCII: UInt8(ascii: "@")).map { text[text.utf8.index(after: $0)...] } ?? text[...]))
        }
        let scheme = url.scheme?.lowercased() ?? "http"
        guard scheme == "http" else { throw .unsupportedScheme(scheme) }
        var fromURL: Credential?
        if let user = url.user(percentEncoded: false) {
            fromURL = Credential(user: user, password: url.password(percentEncoded: false) ?? "", persistence: .none)
        }
        self.init(host: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host, port: url.port ?? 1080,
                  credential: credential ?? fromURL, noProxy: noProxy)
    }

    /// The proxies the environment names: `http_proxy`/`HTTP_PROXY` for http, `https_proxy`/`HTTPS_PROXY`
    /// for https, `no_proxy`/`NO_PROXY` for the exceptions (lowercase first, as curl). Malformed values are ignored.
    public static func environment(_ variables: [String: String] = ProcessInfo.processInfo.environment) -> (http: ProxyConfiguration?, https: ProxyConfiguration?) {
        func value(_ name: String) -> String? {
            (variables[name.lowercased()] ?? variables[name.uppercased()]).flatMap { $0.isEmpty ? nil : $0 }
        }
        let noProxy = value("NO_PROXY").map { $0.split(atASCII: UInt8(ascii: ",")).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } } ?? []
        let http = value("HTTP_PROXY").flatMap { try? ProxyConfiguration(url: $0, noProxy: noProxy) }
        let https = value("HTTPS_PROXY").flatMap { try? ProxyConfiguration(url: $0, noProxy: noProxy) }
        return (http, https)
    }

    /// Whether `host:port` is reached through this proxy (not excluded by ``noProxy``).
    public func applies(toHost host: String, port: Int) -> Bool {
        let host = host.lowercased()
        for raw in noProxy {
            var entry = raw.lowercased()
            if entry == "*" { return false }
            var entryPort: Int?
            if let colon = entry.lastIndex(of: ":"), !entry.hasSuffix("]"), entry.filter({ $0 == ":" }).count == 1, let parsed = Int(entry[entry.index(after: colon)...]) {
                entryPort = parsed
                entry = String(entry[..<colon])
            }
            if entry.hasPrefix("[") && entry.hasSuffix("]") { entry = String(entry.dropFirst().dropLast()) }
            if entry.hasPrefix(".") { entry.removeFirst() }
            if entry.hasPrefix("*.") { entry.removeFirst(2) }
            guard !entry.isEmpty, entryPort == nil || entryPort == port else { continue }
            if host == entry || host.hasSuffix("." + entry) { return false }
        }
        return true
    }

    var origin: Origin { Origin(scheme: "http", host: host, port: port) }

    /// The proxy as a URL, `http://host:port`, without credentials.
    public var description: String { "http://\(host.containsASCII(UInt8(ascii: ":")) ? "[\(host)]" : host):\(port)" }
}

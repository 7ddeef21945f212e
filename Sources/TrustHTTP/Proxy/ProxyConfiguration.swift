import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
    /// Hosts reached directly (curl's `NO_PROXY`, matched as ``NoProxyList`` says): `*` alone for all,
    /// `example.com` or `.example.com` for the domain and its subdomains, IP addresses exactly or as CIDR
    /// ranges (`10.0.0.0/8`, `fd00::/8`); an entry may end in `:PORT`.
    public var noProxy: [String]

    /// Why a proxy URL cannot be used.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// The error with its data, for this package's code: cases come in minor versions without breaking a client,
        /// who shows the error (its description says what is wrong).
        package let detail: Detail

        package init(_ detail: Detail) { self.detail = detail }

        /// Human-readable form.
        public var description: String { detail.description }

        package static func malformed(_ value0: String) -> Self { Self(.malformed(value0)) }
        package static func unsupportedScheme(_ value0: String) -> Self { Self(.unsupportedScheme(value0)) }

        /// The cases, exhaustive inside this package.
        package enum Detail: Sendable, Hashable {
            /// The text is not a proxy URL (shown without anything up to its last `@`).
            case malformed(String)
            /// The URL's scheme is not `http` (`socks4`, `socks5`, `socks5h`, `https`… are not supported: a
            /// request they apply to fails, it never goes direct).
            case unsupportedScheme(String)

            /// Human-readable form.
            package var description: String {
                switch self {
                case .malformed(let text): return "not a proxy URL: \(text)"
                case .unsupportedScheme(let scheme): return "proxy scheme \(scheme) is not supported (http only)"
                }
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
    /// A port outside 1–65535 is refused as malformed (curl: "Unsupported proxy syntax", exit 5).
    public init(url text: String, credential: Credential? = nil, noProxy: [String] = []) throws(Problem) {
        let withScheme = text.utf8.firstRange(of: "://".utf8) != nil ? text : "http://" + text
        // Never repeat a password: keep only what follows the last '@', found by byte (a combining
        // mark after it makes one `Character` that is not '@').
        let shown = String(text.lastIndex(ofASCII: UInt8(ascii: "@")).map { text[text.utf8.index(after: $0)...] } ?? text[...])
        guard let url = URL(string: withScheme), let host = url.host(percentEncoded: false), !host.isEmpty, Origin.isAcceptableHost(host),
            Origin.nameProblem(url) == nil
        else {
            throw .malformed(shown)
        }
        let scheme = url.scheme?.lowercased() ?? "http"
        guard scheme == "http" else { throw .unsupportedScheme(scheme) }
        let port: Int?
        do {
            port = try InvalidPort.port(of: url)
        } catch {
            throw .malformed(shown)
        }
        var fromURL: Credential?
        if let user = url.user(percentEncoded: false) {
            fromURL = Credential(user: user, password: url.password(percentEncoded: false) ?? "", persistence: .none)
        }
        // The canonical name (A-labels), whichever Foundation parsed the URL (see Origin).
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        self.init(
            host: Origin.canonical(bare), port: port ?? 1080,
            credential: credential ?? fromURL, noProxy: noProxy)
    }

    /// The usable proxies the environment names, read as ``ProxyEnvironment`` reads them (`http_proxy` —
    /// never `HTTP_PROXY` — for http, `https_proxy`/`HTTPS_PROXY` for https, `all_proxy`/`ALL_PROXY` for
    /// either, `no_proxy`/`NO_PROXY`). A setting that cannot be used (`socks5://`, `https://`…) gives nil here:
    /// a caller must not take that for "no proxy" and go direct. ``ProxyEnvironment/init(variables:)`` reports
    /// it, and a session with ``TrustHTTPClientConfiguration/usesEnvironmentProxies`` fails the requests it applies to.
    public static func environment(_ variables: [String: String] = ProcessInfo.processInfo.environment) -> (
        http: ProxyConfiguration?, https: ProxyConfiguration?
    ) {
        let environment = ProxyEnvironment(variables: variables)
        func usable(_ setting: ProxyEnvironment.Setting?) -> ProxyConfiguration? {
            guard case .proxy(var proxy) = setting else { return nil }
            proxy.noProxy = environment.noProxy.entries
            return proxy
        }
        return (usable(environment.http), usable(environment.https))
    }

    /// Whether `host:port` is reached through this proxy (not excluded by ``noProxy``).
    public func applies(toHost host: String, port: Int) -> Bool {
        noProxy.isEmpty || !NoProxyList(entries: noProxy).excludes(host: host, port: port)
    }

    var origin: Origin { Origin(scheme: "http", host: host, port: port) }

    /// The proxy as a URL, `http://host:port`, without credentials.
    public var description: String { "http://\(host.containsASCII(UInt8(ascii: ":")) ? "[\(host)]" : host):\(port)" }
}

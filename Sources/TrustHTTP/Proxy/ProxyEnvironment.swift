#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which proxy each request goes through: the proxy settings of an environment, read as curl 7.88 reads them
/// (lib/url.c, `detect_proxy`), or one proxy for every request (curl's `-x`), with the exceptions of a
/// ``NoProxyList``.
///
/// From the environment:
/// - `http` URLs: `http_proxy` only — never `HTTP_PROXY`. Under CGI every request header becomes a variable
///   (RFC 3875 §4.1.18): a client's `Proxy:` header arrives as `HTTP_PROXY`, and would choose where the
///   server's own outgoing requests go ("httpoxy", CVE-2016-5385 and its siblings). curl ignores it for that reason.
/// - `https` URLs: `https_proxy`, else `HTTPS_PROXY`.
/// - Either, when its own variable is unset: `all_proxy`, else `ALL_PROXY`.
/// - Exceptions: `no_proxy`, else `NO_PROXY`.
///
/// An empty variable counts as unset (curl's `curl_getenv`). A setting whose proxy cannot be used — a scheme
/// other than `http` (`socks4://`, `socks5://`, `socks5h://`, `https://`, any other), a malformed URL, a port
/// outside 1–65535 — is kept as ``Setting/unusable(source:problem:)``: a request it applies to fails with
/// ``UnusableProxy``; it never goes direct (the user set a proxy to stay inside a policy, or anonymous). A host
/// the exceptions name goes direct whatever the setting, as in curl.
public struct ProxyEnvironment: Sendable {
    /// One scheme's proxy setting.
    public enum Setting: Sendable {
        /// Requests go through this proxy.
        case proxy(ProxyConfiguration)
        /// A proxy was asked for (by `source`: a variable's name, `--proxy`) that cannot be used.
        case unusable(source: String, problem: ProxyConfiguration.Problem)

        /// The setting `url` gives (`source` names where it came from, for the error).
        public init(url: String, source: String, credential: Credential? = nil) {
            do {
                self = .proxy(try ProxyConfiguration(url: url, credential: credential))
            } catch {
                self = .unusable(source: source, problem: error)
            }
        }
    }

    /// A request's proxy setting that cannot be used: the request fails rather than going direct.
    public struct UnusableProxy: Error, Sendable, Hashable, CustomStringConvertible {
        /// Where the setting came from (`https_proxy`, `ALL_PROXY`, `--proxy`…).
        public var source: String
        /// Why it cannot be used.
        public var problem: ProxyConfiguration.Problem

        public var description: String { "the proxy set by \(source) cannot be used: \(problem)" }
    }

    /// For `http` URLs.
    public var http: Setting?
    /// For `https` URLs.
    public var https: Setting?
    /// The hosts reached directly, whatever the settings.
    public var noProxy: NoProxyList

    /// The given settings.
    public init(http: Setting? = nil, https: Setting? = nil, noProxy: NoProxyList = NoProxyList(entries: [])) {
        self.http = http
        self.https = https
        self.noProxy = noProxy
    }

    /// The settings `variables` give (the process's environment by default), as curl 7.88 reads them.
    public init(variables: [String: String] = ProcessInfo.processInfo.environment) {
        func value(_ name: String) -> (name: String, value: String)? {
            guard let value = variables[name], !value.isEmpty else { return nil }
            return (name, value)
        }
        let all = value("all_proxy") ?? value("ALL_PROXY")
        // Never HTTP_PROXY (httpoxy, above).
        let http = value("http_proxy") ?? all
        let https = value("https_proxy") ?? value("HTTPS_PROXY") ?? all
        self.init(
            http: http.map { Setting(url: $0.value, source: $0.name) },
            https: https.map { Setting(url: $0.value, source: $0.name) },
            noProxy: NoProxyList((value("no_proxy") ?? value("NO_PROXY"))?.value ?? ""))
    }

    /// One proxy for every request, as curl's `-x` (an unusable one fails every request it applies to); an empty
    /// `url` means no proxy at all, as curl's `-x ""` (CURLOPT_PROXY: "explicitly disables the use of a proxy").
    public init(proxy url: String, source: String = "--proxy", credential: Credential? = nil, noProxy: NoProxyList = NoProxyList(entries: [])) {
        let setting = url.isEmpty ? nil : Setting(url: url, source: source, credential: credential)
        self.init(http: setting, https: setting, noProxy: noProxy)
    }

    /// Sends `credential` to every proxy set (curl's `-U`, which wins over user-info in a proxy URL).
    public mutating func setCredential(_ credential: Credential) {
        func with(_ setting: Setting?) -> Setting? {
            guard case .proxy(var proxy) = setting else { return setting }
            proxy.credential = credential
            return .proxy(proxy)
        }
        http = with(http)
        https = with(https)
    }

    /// The proxy for a request to `host:port` over `scheme` (`http` or `https`); nil: direct.
    public func proxy(scheme: String, host: String, port: Int) throws(UnusableProxy) -> ProxyConfiguration? {
        guard let setting = scheme == "https" ? https : http, !noProxy.excludes(host: host, port: port) else { return nil }
        switch setting {
        case .proxy(let proxy): return proxy
        case .unusable(let source, let problem): throw UnusableProxy(source: source, problem: problem)
        }
    }
}

// A deployment whose egress goes through a proxy: the proxy URL and its login come from the deployment's settings
// (not the process environment, which a library should not read behind the service's back), internal hosts go
// direct, and a setting that cannot be used fails the requests it covers instead of silently going direct.
import Foundation
import TrustHTTP

/// The egress settings of a deployment.
public struct OutboundProxy: Sendable {
    /// The settings a client is given (`TrustHTTPClientConfiguration.proxyEnvironment`).
    public let environment: ProxyEnvironment

    /// Every `http` and `https` request through `url` (`http://proxy.internal:3128`) logging in as `user`, except
    /// the hosts in `direct` (curl's `NO_PROXY` syntax: `internal.example`, `.svc`, `10.0.0.0/8`, `*`).
    public init(url: String, user: String? = nil, password: String? = nil, direct: [String] = []) {
        let credential = user.map { Credential(user: $0, password: password ?? "", persistence: .forSession) }
        let setting = ProxyEnvironment.Setting(url: url, source: "egress.proxy", credential: credential)
        environment = ProxyEnvironment(http: setting, https: setting, noProxy: NoProxyList(entries: direct))
    }

    /// The hosts that go direct.
    public var directHosts: [String] { environment.noProxy.entries }

    /// How a request to `url` leaves: `direct`, `via http://host:port`, or why the setting cannot be used.
    public func route(for url: URL) -> String {
        guard let host = url.host, let scheme = url.scheme else { return "not a URL with a host" }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        do {
            guard let proxy = try environment.proxy(scheme: scheme, host: host, port: port) else { return "direct" }
            // The proxy's own exceptions, were it configured on its own (`TrustHTTPClientConfiguration.proxy`).
            guard proxy.applies(toHost: host, port: port) else { return "direct" }
            return "via \(proxy)"
        } catch {
            return "refused: \(error.source) (\(error.problem))"
        }
    }

    /// Whether `host:port` goes direct, by the exception list alone.
    public func isDirect(host: String, port: Int) -> Bool { environment.noProxy.excludes(host: host, port: port) }

    /// What the process environment (`https_proxy`, `NO_PROXY`…) would set, for a startup warning when it differs
    /// from the deployment's settings: a library should not follow it silently.
    public static func environmentProxies(_ variables: [String: String]) -> (http: String?, https: String?) {
        let proxies = ProxyConfiguration.environment(variables)
        return (proxies.http.map { "\($0)" }, proxies.https.map { "\($0)" })
    }

    /// `base` sending through these settings.
    public func configuration(_ base: TrustHTTPClientConfiguration) -> TrustHTTPClientConfiguration {
        var configuration = base
        configuration.proxyEnvironment = environment
        configuration.usesEnvironmentProxies = false
        return configuration
    }

    /// The same egress as one `ProxyConfiguration` (`TrustHTTPClientConfiguration.proxy`): one proxy for every
    /// scheme, with its own exception list; nil when the URL cannot be used.
    public static func single(host: String, port: Int, user: String, password: String, direct: [String]) -> ProxyConfiguration {
        ProxyConfiguration(host: host, port: port, credential: Credential(user: user, password: password), noProxy: direct)
    }

    /// The same from a proxy URL; nil when the URL cannot be used.
    public static func single(url: String, direct: [String]) -> ProxyConfiguration? {
        guard var proxy = try? ProxyConfiguration(url: url, noProxy: []) else { return nil }
        proxy.noProxy = direct
        return proxy
    }
}

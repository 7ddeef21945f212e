import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// Proxy variables as curl 7.88 reads them (``ProxyEnvironment``), `no_proxy` as curl matches it
/// (``NoProxyList``), an unusable proxy setting failing the request rather than sending it direct, and ports
/// outside 1–65535 refused (``InvalidPort``). The same rows run against curl itself in `CurlParityTests`.
@Suite("Proxy environment, no_proxy, unusable proxies and ports", .serialized, .timeLimit(.minutes(5)), .paced)
struct ProxyEnvironmentTests {
    /// What a setting is, for comparing: `host:port`, `unusable VARIABLE`, or nil.
    static func summary(_ setting: ProxyEnvironment.Setting?) -> String? {
        switch setting {
        case .proxy(let proxy): return "\(proxy.host):\(proxy.port)"
        case .unusable(let source, _): return "unusable \(source)"
        case nil: return nil
        }
    }

    /// Which variable applies to http and https URLs (lower case first; HTTP_PROXY never; empty as unset).
    @Test(
        arguments: [
            (["HTTP_PROXY": "h:1"], nil, nil),
            (["http_proxy": "h:1"], "h:1", nil),
            (["http_proxy": "h:1", "HTTP_PROXY": "u:2"], "h:1", nil),
            (["HTTPS_PROXY": "s:3"], nil, "s:3"),
            (["https_proxy": "s:3", "HTTPS_PROXY": "u:4"], nil, "s:3"),
            (["https_proxy": "", "HTTPS_PROXY": "u:4"], nil, "u:4"),
            (["ALL_PROXY": "a:5"], "a:5", "a:5"),
            (["all_proxy": "a:5", "ALL_PROXY": "b:6"], "a:5", "a:5"),
            (["all_proxy": "", "ALL_PROXY": "b:6"], "b:6", "b:6"),
            (["HTTP_PROXY": "h:1", "ALL_PROXY": "a:5"], "a:5", "a:5"),
            (["http_proxy": "", "https_proxy": "s:3", "all_proxy": "a:5"], "a:5", "s:3"),
            (["http_proxy": "h:1", "all_proxy": "socks5://a:5"], "h:1", "unusable all_proxy"),
            (["ALL_PROXY": "socks5h://a:5"], "unusable ALL_PROXY", "unusable ALL_PROXY"),
            (["https_proxy": "https://s:3"], nil, "unusable https_proxy"),
            (["http_proxy": "h:98425"], "unusable http_proxy", nil),
        ] as [([String: String], String?, String?)])
    func variablesAsCurl(_ variables: [String: String], http: String?, https: String?) {
        let environment = ProxyEnvironment(variables: variables)
        #expect(Self.summary(environment.http) == http, "\(variables)")
        #expect(Self.summary(environment.https) == https, "\(variables)")
        // The older entry point reads the same variables (and drops what cannot be used).
        let legacy = ProxyConfiguration.environment(variables)
        #expect(legacy.http.map { "\($0.host):\($0.port)" } == http.flatMap { $0.hasPrefix("unusable") ? nil : $0 })
    }

    /// Every scheme but http, from a variable or as -x, is unusable with the scheme named; no_proxy still
    /// sends an excluded host direct (as curl, which checks no_proxy first).
    @Test(arguments: ["socks4", "socks4a", "socks5", "socks5h", "https", "ftp", "foo"])
    func unusableSchemes(_ scheme: String) throws {
        for environment in [
            ProxyEnvironment(variables: ["all_proxy": "\(scheme)://127.0.0.1:1080", "no_proxy": "direct.example"]),
            ProxyEnvironment(proxy: "\(scheme)://127.0.0.1:1080", noProxy: NoProxyList("direct.example")),
        ] {
            for requestScheme in ["http", "https"] {
                #expect(throws: ProxyEnvironment.UnusableProxy.self) { try environment.proxy(scheme: requestScheme, host: "example.com", port: 443) }
                do {
                    _ = try environment.proxy(scheme: requestScheme, host: "example.com", port: 443)
                } catch {
                    #expect(error.problem == .unsupportedScheme(scheme))
                }
                #expect(try environment.proxy(scheme: requestScheme, host: "direct.example", port: 443) == nil)
            }
        }
    }

    /// An empty -x means no proxy, as curl's (CURLOPT_PROXY ""), whatever the variables say.
    @Test func emptyProxyMeansNone() throws {
        let none = ProxyEnvironment(proxy: "")
        #expect(none.http == nil && none.https == nil)
        #expect(try none.proxy(scheme: "https", host: "example.com", port: 443) == nil)
    }

    /// no_proxy rows: (list, host, port, excluded). Each was run against curl 7.88 (lib/noproxy.c) where curl
    /// has the rule; the IPv6 CIDR and bracket rows and the `:PORT` rows are ours (curl 7.88 compares IPv6 hosts as text).
    @Test(
        arguments: [
            ("*", "anything.example", 80, true),
            (" * ", "anything.example", 80, true),
            ("example.com,*", "anything.example", 80, false),
            ("example.com", "example.com", 80, true),
            ("example.com", "www.example.com", 80, true),
            ("example.com", "notexample.com", 80, false),
            (".example.com", "example.com", 80, true),
            (".example.com", "www.example.com", 80, true),
            ("example.com.", "www.example.com", 80, true),
            ("example.com", "www.example.com.", 80, true),
            (".example.com.", "example.com.", 80, true),
            ("EXAMPLE.com", "www.Example.COM", 80, true),
            ("*.example.com", "www.example.com", 80, true),
            ("a.example.com", "example.com", 80, false),
            ("foo bar,\texample.com", "example.com", 80, true),
            ("foo,,  ,example.com", "example.com", 80, true),
            ("127.0.0.1", "127.0.0.1", 80, true),
            ("127.0.0.1.", "127.0.0.1", 80, false),
            ("127.0.0.0/8", "127.0.0.1", 80, true),
            ("127.0.0.0/8", "128.0.0.1", 80, false),
            ("10.0.0.0/8", "10.255.1.2", 80, true),
            ("10.0.0.0/8", "11.0.0.1", 80, false),
            ("192.168.1.0/24", "192.168.1.77", 80, true),
            ("192.168.1.0/24", "192.168.2.77", 80, false),
            ("172.16.0.0/12", "172.31.255.255", 80, true),
            ("172.16.0.0/12", "172.32.0.1", 80, false),
            ("127.0.0.1/33", "127.0.0.1", 80, false),
            ("127.0.0.1/0", "127.0.0.1", 80, true),
            ("127.0.0.1/0", "127.0.0.2", 80, false),
            ("127.0.0.1/8x", "127.9.9.9", 80, true),
            ("localhost", "127.0.0.1", 80, false),
            ("0.0.1", "127.0.0.1", 80, false),
            ("::1", "::1", 80, true),
            ("[::1]", "::1", 80, true),
            ("::1", "[::1]", 80, true),
            ("::1/128", "::1", 80, true),
            ("0:0:0:0:0:0:0:1", "::1", 80, true),
            ("fd00::/8", "fd12:3456::1", 80, true),
            ("fd00::/8", "fe80::1", 80, false),
            ("[fd00::]/8", "fd12::1", 80, true),
            ("2001:db8::/32", "2001:db8:ffff::1", 80, true),
            ("2001:db8::/33", "2001:db8:ffff::1", 80, false),
            ("::/0", "::1", 80, false),
            ("::1/129", "::1", 80, false),
            ("127.0.0.0/8", "::ffff:127.0.0.1", 80, false),
            ("::1", "127.0.0.1", 80, false),
            ("example.com:8443", "example.com", 8443, true),
            ("example.com:8443", "example.com", 443, false),
            ("[::1]:8080", "::1", 8080, true),
            ("[::1]:8080", "::1", 80, false),
            ("127.0.0.1:8080", "127.0.0.1", 8080, true),
            ("", "example.com", 80, false),
        ] as [(String, String, Int, Bool)])
    func noProxyAsCurl(_ list: String, host: String, port: Int, excluded: Bool) {
        #expect(NoProxyList(list).excludes(host: host, port: port) == excluded, "no_proxy=\(list) host \(host):\(port)")
        // ProxyConfiguration's own exceptions follow the same rules.
        let proxy = ProxyConfiguration(host: "proxy.example", port: 3128, noProxy: NoProxyList(list).entries)
        #expect(proxy.applies(toHost: host, port: port) == !excluded)
    }

    /// A session with an environment whose proxy cannot be used fails the request with a typed error naming the
    /// variable; it never reaches the server direct. A host no_proxy names goes direct.
    @Test func sessionRefusesUnusableEnvironmentProxy() async throws {
        let plain = try await LabServer.startPlain(name: "plain")
        for variables in [
            ["all_proxy": "socks5h://127.0.0.1:1"], ["http_proxy": "https://127.0.0.1:1"], ["ALL_PROXY": "socks4://127.0.0.1:1"],
            ["http_proxy": "http://127.0.0.1:98425"],
        ] {
            let session = try labSession { $0.proxyEnvironment = ProxyEnvironment(variables: variables) }
            let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(plain, "/"))) }
            #expect(error?.code == .cannotConnectToHost, "\(variables)")
            let unusable = error?.underlyingError as? ProxyEnvironment.UnusableProxy
            #expect(unusable?.source == variables.keys.first, "\(variables): \(String(describing: error))")
            await session.shutdown()

            var excluded = variables
            excluded["no_proxy"] = ".lab.test"
            let direct = try labSession { $0.proxyEnvironment = ProxyEnvironment(variables: excluded) }
            #expect(try await direct.data(for: TrustHTTPClientRequest(url: url(plain, "/"))).statusCode == 200)
            await direct.shutdown()
        }
        // A port set in code, outside 1–65535: refused, not wrapped to another port.
        let wrapped = try labSession { $0.proxy = ProxyConfiguration(host: "127.0.0.1", port: 65_536 + 80) }
        #expect(await sessionError { try await wrapped.data(for: TrustHTTPClientRequest(url: url(plain, "/"))) }?.code == .cannotConnectToHost)
        await wrapped.shutdown()
        try await plain.shutdown()
    }

    /// The session's environment proxy is used per request scheme: http_proxy for http, never HTTP_PROXY.
    @Test func sessionUsesTheSchemesVariable() async throws {
        let proxy = try await LabProxy.start()
        let plain = try await LabServer.startPlain(name: "plain")
        let upper = try labSession { $0.proxyEnvironment = ProxyEnvironment(variables: ["HTTP_PROXY": proxy.url]) }
        #expect(try await upper.data(for: TrustHTTPClientRequest(url: url(plain, "/"))).statusCode == 200)
        #expect(proxy.requests.isEmpty, "HTTP_PROXY was obeyed: \(proxy.requests)")
        await upper.shutdown()
        let lower = try labSession { $0.proxyEnvironment = ProxyEnvironment(variables: ["http_proxy": proxy.url]) }
        #expect(try await lower.data(for: TrustHTTPClientRequest(url: url(plain, "/"))).statusCode == 200)
        #expect(proxy.requests.contains { $0.hasPrefix("GET http://plain.lab.test:\(plain.port)/") }, "\(proxy.requests)")
        await lower.shutdown()
        try await proxy.shutdown()
        try await plain.shutdown()
    }

    /// Ports outside 1–65535 in a request URL or a redirect are `badURL` with ``InvalidPort``, before any
    /// connection (98425 connected to port 32889, 65536 to port 0); in a proxy URL, `malformed`.
    @Test func portsOutsideTheRange() async throws {
        let plain = try await LabServer.startPlain(name: "plain")
        let session = try labSession()
        for (text, port) in [
            ("http://127.0.0.1:98425/", "98425"), ("http://127.0.0.1:65536/", "65536"), ("http://127.0.0.1:0/", "0"),
            ("https://[::1]:70000/", "70000"), ("http://127.0.0.1:99999999999999999999/", "99999999999999999999"),
            ("http://user:pw@127.0.0.1:123456/x?y#z", "123456"),
        ] {
            let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: try #require(URL(string: text)))) }
            #expect(error?.code == .badURL, "\(text)")
            #expect(error?.underlyingError as? InvalidPort == InvalidPort(text: port), "\(text): \(String(describing: error))")
            #expect(error?.message.contains("pw") == false)
        }
        for location in ["http://127.0.0.1:98425/", "//127.0.0.1:65536/x", "http://plain.lab.test:99999999999999999999/"] {
            let target = location.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(plain, "/redirect?to=" + target))) }
            #expect(error?.code == .badURL && error?.underlyingError is InvalidPort, "\(location): \(String(describing: error))")
        }
        #expect(
            try await session.data(for: TrustHTTPClientRequest(url: try #require(URL(string: "http://plain.lab.test:000\(plain.port)/")))).statusCode == 200)
        for proxy in ["127.0.0.1:98425", "http://127.0.0.1:65536", "http://u:secret@h:0", "h:99999999999999999999"] {
            #expect(throws: ProxyConfiguration.Problem.self) { try ProxyConfiguration(url: proxy) }
            do {
                _ = try ProxyConfiguration(url: proxy)
            } catch {
                guard case .malformed(let shown) = error.detail else {
                    Issue.record("\(proxy): \(error)")
                    continue
                }
                #expect(!shown.contains("secret"))
            }
        }
        #expect(try ProxyConfiguration(url: "h:65535").port == 65_535)
        #expect(try ProxyConfiguration(url: "h").port == 1080)
        await session.shutdown()
        try await plain.shutdown()
    }
}

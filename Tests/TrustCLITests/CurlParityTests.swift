import Foundation
import Testing
import Trust
import TrustLab
import TrustTestSupport

/// Proxy variables, `no_proxy`, unusable proxies and ports in `trust get`, row by row against the same loopback
/// servers as curl: each row states what curl 7.88 did (its exit code, and whether the lab proxy saw the
/// request), `trust get` must do the same, and curl itself is run on the row where it is installed. Every child
/// runs under `env -i` with the row's variables only: nothing of the test process's environment leaks in.
@Suite("Proxies, no_proxy and ports as curl", .serialized, .timeLimit(.minutes(5)), .paced)
struct CurlParityTests {
    /// What curl does on a row.
    enum Curl {
        /// The row's exit code and route, as trust.
        case same
        /// curl supports this proxy and trust refuses it: curl is only checked not to have gone direct.
        case neverDirect
        /// curl 7.88 is weaker here, on purpose not followed (the reason): curl is not run.
        case differs(String)
    }

    struct Row: CustomStringConvertible {
        var environment: [String] = []
        var arguments: [String] = []
        /// The URL, `{port}` standing for the plain server's port, `{proxy}` for the proxy's.
        var url = "http://127.0.0.1:{port}/"
        var exit: Int32 = 0
        var proxied: Bool
        var curl = Curl.same

        var description: String { (environment + arguments + [url]).joined(separator: " ") }
    }

    /// Runs `executable` (trust or curl) on a row: its exit code and whether the proxy saw a request.
    func outcome(_ row: Row, curl: Bool, server: LabServer, proxy: LabProxy, seconds: Int = 20) async throws -> (exit: Int32, proxied: Bool, stderr: String) {
        let substitute = { (text: String) in
            text.replacingOccurrences(of: "{port}", with: String(server.port)).replacingOccurrences(of: "{proxy}", with: String(proxy.port))
        }
        // trust's handshake gets the whole -m (its --connect-timeout is 10 s by default, curl's 300 s): on a loaded
        // machine a loopback handshake has taken longer, and these rows compare where requests go, not limits.
        let tool = curl ? [ExternalTool.curl.path, "-sS"] : [CLI.binary, "get", "-sS", "--connect-timeout", String(seconds)]
        let before = proxy.requests.count
        let (status, _, stderr) = try await run(
            "/usr/bin/env",
            ["-i"] + row.environment.map(substitute) + tool + ["-m", String(seconds), "-o", "/dev/null"] + row.arguments.map(substitute) + [substitute(row.url)]
        )
        return (status, proxy.requests.count > before, stderr)
    }

    func check(_ rows: [Row], https: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let server = https ? try await LabServer.start("good", pki: Lab.pki) : try await LabServer.startPlain(name: "plain")
        let proxy = try await LabProxy.start()
        for row in rows {
            let trust = try await outcome(row, curl: false, server: server, proxy: proxy)
            #expect(
                trust.exit == row.exit && trust.proxied == row.proxied,
                "trust get \(row): exit \(trust.exit), \(trust.proxied ? "proxied" : "not proxied"); expected \(row.exit), \(row.proxied ? "proxied" : "not proxied")\n\(trust.stderr)",
                sourceLocation: sourceLocation)
            // curl prints a malformed proxy URL whole, password included; trust never does.
            #expect(!trust.stderr.contains("secret"), "trust get \(row): \(trust.stderr)", sourceLocation: sourceLocation)
            guard ExternalTool.curl.isInstalled else { continue }
            switch row.curl {
            case .same:
                let curl = try await outcome(row, curl: true, server: server, proxy: proxy)
                #expect(
                    curl.exit == trust.exit && curl.proxied == trust.proxied,
                    "curl \(row): exit \(curl.exit), \(curl.proxied ? "proxied" : "not proxied"); trust: \(trust.exit), \(trust.proxied ? "proxied" : "not proxied")\n\(curl.stderr)",
                    sourceLocation: sourceLocation)
            case .neverDirect:
                // curl speaks SOCKS or TLS to the lab's HTTP proxy, which may wait for more: a timeout is not direct either.
                let curl = try await outcome(row, curl: true, server: server, proxy: proxy, seconds: 3)
                #expect(curl.exit != 0, "curl \(row) went direct", sourceLocation: sourceLocation)
            case .differs:
                break
            }
        }
        if !ExternalTool.curl.isInstalled {
            print("CurlParityTests: curl is not installed at \(ExternalTool.curl.path): trust checked against curl 7.88's recorded results only")
        }
        try await proxy.shutdown()
        try await server.shutdown()
    }

    static let proxy = "http://127.0.0.1:{proxy}"

    /// Which variable names a proxy for an http URL: never HTTP_PROXY (httpoxy); all_proxy/ALL_PROXY when
    /// http_proxy is unset or empty; lower-case no_proxy before NO_PROXY; -x with no_proxy, --noproxy over it.
    @Test func proxyVariablesAsCurl() async throws {
        try await check([
            Row(environment: ["http_proxy=" + Self.proxy], proxied: true),
            Row(environment: ["HTTP_PROXY=" + Self.proxy], proxied: false),
            Row(environment: ["all_proxy=" + Self.proxy], proxied: true),
            Row(environment: ["ALL_PROXY=" + Self.proxy], proxied: true),
            Row(environment: ["http_proxy=", "ALL_PROXY=" + Self.proxy], proxied: true),
            Row(environment: ["HTTP_PROXY=" + Self.proxy, "ALL_PROXY=" + Self.proxy], proxied: true),
            Row(environment: ["http_proxy=" + Self.proxy, "NO_PROXY=127.0.0.1"], proxied: false),
            Row(environment: ["http_proxy=" + Self.proxy, "NO_PROXY=127.0.0.1", "no_proxy=example.com"], proxied: true),
            Row(environment: ["no_proxy=127.0.0.1"], arguments: ["-x", Self.proxy], proxied: false),
            Row(environment: ["no_proxy=127.0.0.1"], arguments: ["-x", Self.proxy, "--noproxy", "example.com"], proxied: true),
            Row(environment: ["http_proxy=" + Self.proxy], arguments: ["--noproxy", "127.0.0.1"], proxied: false),
            Row(environment: ["http_proxy=" + Self.proxy, "no_proxy=127.0.0.1"], arguments: ["--noproxy", ""], proxied: true),
            Row(environment: ["http_proxy=" + Self.proxy], arguments: ["-x", ""], proxied: false),  // no proxy at all
        ])
    }

    /// For https URLs: https_proxy, else HTTPS_PROXY, else all_proxy/ALL_PROXY — never http_proxy; CONNECT seen by the proxy.
    @Test func httpsProxyVariablesAsCurl() async throws {
        let lab = ["--resolve", "good.lab.test:{port}:127.0.0.1", "--cacert", CLI.lab + "/roots.pem"]
        func row(_ environment: [String], exit: Int32 = 0, proxied: Bool, curl: Curl = .same) -> Row {
            Row(environment: environment, arguments: lab, url: "https://good.lab.test:{port}/", exit: exit, proxied: proxied, curl: curl)
        }
        try await check(
            [
                row(["https_proxy=" + Self.proxy], proxied: true),
                row(["HTTPS_PROXY=" + Self.proxy], proxied: true),
                row(["http_proxy=" + Self.proxy], proxied: false),
                row(["HTTP_PROXY=" + Self.proxy], proxied: false),
                row(["ALL_PROXY=" + Self.proxy], proxied: true),
                row(["https_proxy=http://127.0.0.1:1", "HTTPS_PROXY=" + Self.proxy], exit: 7, proxied: false),
                row(["https_proxy=" + Self.proxy, "no_proxy=.lab.test"], proxied: false),
                row(["https_proxy=" + Self.proxy, "NO_PROXY=good.lab.test."], proxied: false),
                row(["https_proxy=socks5h://127.0.0.1:{proxy}"], exit: 97, proxied: false, curl: .neverDirect),
                row(["https_proxy=https://127.0.0.1:{proxy}"], exit: 97, proxied: false, curl: .neverDirect),
                row(["https_proxy=https://127.0.0.1:{proxy}", "no_proxy=good.lab.test"], proxied: false),
            ], https: true)
    }

    /// no_proxy entries: CIDR ranges, `*` alone, blanks as separators, trailing and leading dots.
    @Test func noProxyAsCurl() async throws {
        func row(_ noProxy: String, url: String = "http://127.0.0.1:{port}/", proxied: Bool, curl: Curl = .same) -> Row {
            Row(
                environment: ["http_proxy=" + Self.proxy, "no_proxy=" + noProxy],
                arguments: ["--resolve", "plain.lab.test:{port}:127.0.0.1", "--resolve", "plain.lab.test.:{port}:127.0.0.1"],
                url: url, proxied: proxied, curl: curl)
        }
        let name = "http://plain.lab.test:{port}/"
        let dotted = "http://plain.lab.test.:{port}/"
        try await check([
            row("127.0.0.0/8", proxied: false),
            row("127.0.0.2/8", proxied: false),
            row("10.0.0.0/8", proxied: true),
            row("127.0.0.1/33", proxied: true),
            row("127.0.0.1/0", proxied: false),
            row("127.0.0.1/32", proxied: false),
            row("*", proxied: false),
            row("example.com,*", proxied: true),
            row(" 127.0.0.1 ", proxied: false),
            row("example.com 127.0.0.1", proxied: false),
            row("example.com,,127.0.0.1", proxied: false),
            row("127.0.0.1.", proxied: true),  // an IPv4 host matches IPv4 entries only
            row("lab.test", url: name, proxied: false),
            row(".lab.test", url: name, proxied: false),
            row("lab.test.", url: name, proxied: false),
            row("PLAIN.LAB.TEST", url: name, proxied: false),
            row("ab.test", url: name, proxied: true),
            row("127.0.0.1", url: name, proxied: true),
            row("plain.lab.test", url: dotted, proxied: false),
            row(".lab.test.", url: dotted, proxied: false),
            // Ours: an entry may end in :{port} (curl 7.88 never matches such an entry).
            row("127.0.0.1:{port}", proxied: false, curl: .differs("curl 7.88 has no port in no_proxy entries")),
            row("127.0.0.1:1", proxied: true),
        ])
    }

    /// IPv6 hosts (nothing listens on [::1]: direct is exit 7, the proxy answers through the tunnel it cannot make).
    @Test func noProxyIPv6() async throws {
        func row(_ noProxy: String, proxied: Bool, curl: Curl = .same) -> Row {
            Row(
                environment: ["http_proxy=" + Self.proxy, "no_proxy=" + noProxy], url: "http://[::1]:{port}/", exit: proxied ? 0 : 7, proxied: proxied,
                curl: curl)
        }
        let textual = "curl 7.88 compares an IPv6 host with the entries as text"
        try await check([
            row("::1", proxied: false),
            row("fd00::/8", proxied: true),
            row("example.com", proxied: true),
            row("[::1]", proxied: false, curl: .differs(textual)),
            row("::1/128", proxied: false, curl: .differs(textual)),
            row("::/0", proxied: true),
            row("0:0:0:0:0:0:0:1", proxied: false, curl: .differs(textual)),
            row("::/64", proxied: false, curl: .differs(textual)),
        ])
    }

    /// A proxy that cannot be used, from -x or a variable (all_proxy included): an error, never direct —
    /// exit 7 for a scheme (curl's "Unsupported proxy scheme"), 5 for a malformed URL or port (curl's
    /// "Unsupported proxy syntax"). curl speaks SOCKS and HTTPS to proxies; trust refuses them.
    @Test func unusableProxiesAsCurl() async throws {
        try await check([
            Row(environment: ["http_proxy=foo://127.0.0.1:{proxy}"], exit: 7, proxied: false),
            Row(arguments: ["-x", "foo://127.0.0.1:{proxy}"], exit: 7, proxied: false),
            Row(environment: ["ALL_PROXY=gopher://127.0.0.1:{proxy}"], exit: 7, proxied: false),
            Row(environment: ["http_proxy=127.0.0.1:98425"], exit: 5, proxied: false),
            Row(environment: ["http_proxy=http://user:secret@127.0.0.1:65536"], exit: 5, proxied: false),
            Row(environment: ["ALL_PROXY=http://user:secret@127.0.0.1:98425"], arguments: ["-v"], exit: 5, proxied: false),
            Row(environment: ["all_proxy=socks5://user:secret@127.0.0.1:{proxy}"], arguments: ["-v"], exit: 97, proxied: false, curl: .neverDirect),
            Row(arguments: ["-x", "127.0.0.1:98425"], exit: 5, proxied: false),
            Row(arguments: ["-x", "http://127.0.0.1:x/"], exit: 5, proxied: false),
            Row(environment: ["http_proxy=foo://127.0.0.1:{proxy}", "no_proxy=127.0.0.1"], proxied: false),
            Row(arguments: ["-x", "socks5://127.0.0.1:{proxy}", "--noproxy", "127.0.0.1"], proxied: false),
            Row(environment: ["http_proxy=socks5://127.0.0.1:{proxy}"], exit: 97, proxied: false, curl: .neverDirect),
            Row(environment: ["all_proxy=socks5h://127.0.0.1:{proxy}"], exit: 97, proxied: false, curl: .neverDirect),
            Row(environment: ["ALL_PROXY=socks4://127.0.0.1:{proxy}"], exit: 97, proxied: false, curl: .neverDirect),
            Row(arguments: ["-x", "socks4a://127.0.0.1:{proxy}"], exit: 97, proxied: false, curl: .neverDirect),
            Row(arguments: ["-x", "https://127.0.0.1:{proxy}"], exit: 97, proxied: false, curl: .neverDirect),
        ])
    }

    /// Ports outside 1–65535: exit 3 in a URL and a redirect's Location (curl), 5 in -x (curl's "Unsupported
    /// proxy syntax"), 49 in --resolve (curl's "Couldn't parse CURLOPT_RESOLVE entry"); never a wrapped port.
    @Test func portsAsCurl() async throws {
        let redirect = "http://127.0.0.1:{port}/redirect?to=http%3A%2F%2F127.0.0.1%3A"
        try await check([
            Row(url: "http://127.0.0.1:98425/", exit: 3, proxied: false),
            Row(url: "http://127.0.0.1:65536/", exit: 3, proxied: false),
            Row(url: "http://127.0.0.1:99999999999999999999/", exit: 3, proxied: false),
            Row(url: "http://[::1]:70000/", exit: 3, proxied: false),
            Row(url: "http://127.0.0.1:0/", exit: 3, proxied: false, curl: .differs("curl 7.88 connects to port 0 (exit 7)")),
            Row(url: "http://127.0.0.1:00000{port}/", proxied: false),
            Row(arguments: ["-L"], url: redirect + "98425%2F", exit: 3, proxied: false),
            Row(arguments: ["-L"], url: redirect + "65536%2F", exit: 3, proxied: false),
            Row(arguments: ["-L"], url: redirect + "{port}%2F", proxied: false),
            Row(arguments: ["--resolve", "plain.lab.test:98425:127.0.0.1"], exit: 49, proxied: false),
            Row(arguments: ["--resolve", "plain.lab.test:65536:127.0.0.1"], exit: 49, proxied: false),
            Row(arguments: ["--resolve", "plain.lab.test:{port}:127.0.0.1"], url: "http://plain.lab.test:{port}/", proxied: false),
            Row(arguments: ["-x", "http://127.0.0.1:65536"], exit: 5, proxied: false),
            Row(environment: ["http_proxy=http://127.0.0.1:98425"], exit: 5, proxied: false),
        ])
    }

    /// `-w %{remote_ip}:%{remote_port}` names the proxy a request went through, from -x or a variable, as curl's.
    @Test func remoteAddressIsTheProxys() async throws {
        let server = try await LabServer.startPlain(name: "plain")
        let proxy = try await LabProxy.start()
        let target = "http://127.0.0.1:\(server.port)/"
        for (environment, arguments, port) in [
            (["http_proxy=\(proxy.url)"], [String](), proxy.port), ([], ["-x", proxy.url], proxy.port),
            (["ALL_PROXY=\(proxy.url)", "no_proxy=127.0.0.0/8"], [], server.port),
        ] {
            let write = ["-sS", "-o", "/dev/null", "-w", "%{remote_ip}:%{remote_port}"] + arguments + [target]
            let (status, out, err) = try await run("/usr/bin/env", ["-i"] + environment + [CLI.binary, "get"] + write)
            #expect(status == 0 && out == "127.0.0.1:\(port)", "\(environment) \(arguments): \(out) \(err)")
            if ExternalTool.curl.isInstalled {
                #expect(try await run("/usr/bin/env", ["-i"] + environment + [ExternalTool.curl.path] + write).1 == out)
            }
        }
        try await proxy.shutdown()
        try await server.shutdown()
    }
}

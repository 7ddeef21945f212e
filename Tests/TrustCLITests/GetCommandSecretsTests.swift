import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// No password, passphrase, `Authorization`/`Proxy-Authorization` value or URL user-info appears
/// in anything `trust get` prints — errors, `-v`, `-w` — for every flag that carries one, on the
/// success and the failure path.
@Suite("trust get never prints secrets", .serialized, .timeLimit(.minutes(5)), .paced)
struct GetCommandSecretsTests {
    /// The Basic form of the lab's alice / wonderland (RFC 7617): it must not leak either.
    static let aliceBasic = Data("alice:wonderland".utf8).base64EncodedString()

    func expectClean(_ result: (Int32, String, String), _ secrets: [String], status: Int32, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.0 == status, "\(result.2)", sourceLocation: sourceLocation)
        // Searched by byte: `String.contains` compares `Character`s and misses a secret followed by a combining mark.
        for secret in secrets {
            #expect(Data(result.1.utf8).range(of: Data(secret.utf8)) == nil, "stdout shows \(secret)", sourceLocation: sourceLocation)
            #expect(Data(result.2.utf8).range(of: Data(secret.utf8)) == nil, "stderr shows \(secret):\n\(result.2)", sourceLocation: sourceLocation)
        }
    }

    func lab(_ server: LabServer) -> [String] {
        ["--resolve", "\(server.host):\(server.port):127.0.0.1", "--cacert", CLI.lab + "/roots.pem"]
    }

    /// The reported defect: `--cert /missing.p12:SuperSecret` printed the password.
    @Test(.requires(.openssl)) func certInlinePassword() async throws {
        let missing = "/missing-\(UUID().uuidString).p12"
        let (status, out, err) = try await run(CLI.binary, ["get", "https://127.0.0.1:1/", "--cert", missing + ":SuperSecret", "-v"])
        expectClean((status, out, err), ["SuperSecret"], status: 58)
        #expect(err.contains(missing))
        let server = try await LabServer.start(mutualTLS: .required, pki: Lab.pki)
        try await withTeardown({ try? await server.shutdown() }) {
            let dir = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let p12 = try await labClientPKCS12(password: "P12Secret-42", in: dir)
            let url = server.baseURL + "/whoami"
            expectClean(try await run(CLI.binary, ["get", url, "--cert", p12 + ":P12Secret-42", "-v"] + lab(server)), ["P12Secret-42"], status: 0)
            expectClean(try await run(CLI.binary, ["get", url, "--cert", p12 + ":WrongSecret-42", "-v"] + lab(server)), ["WrongSecret-42"], status: 58)
        }
    }

    @Test(.requires(.openssl)) func certPasswordFlag() async throws {
        let server = try await LabServer.start(mutualTLS: .required, pki: Lab.pki)
        try await withTeardown({ try? await server.shutdown() }) {
            let dir = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let p12 = try await labClientPKCS12(password: "P12Secret-43", in: dir)
            let url = server.baseURL + "/whoami"
            for flag in ["--pass", "--cert-password"] {
                expectClean(try await run(CLI.binary, ["get", url, "--cert", p12, flag, "P12Secret-43", "-v"] + lab(server)), ["P12Secret-43"], status: 0)
                expectClean(try await run(CLI.binary, ["get", url, "--cert", p12, flag, "WrongSecret-43", "-v"] + lab(server)), ["WrongSecret-43"], status: 58)
                expectClean(try await run(CLI.binary, ["get", url, "--cert", "/missing.p12", flag, "WrongSecret-44", "-v"]), ["WrongSecret-44"], status: 58)
            }
        }
    }

    @Test func userFlag() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            for scheme in ["--basic", "--any-auth", "--digest"] {
                let path = scheme == "--digest" ? "/digest" : "/basic"
                expectClean(
                    try await run(CLI.binary, ["get", good.baseURL + path, "-u", "alice:wonderland", scheme, "-v"] + lab(good)),
                    ["wonderland", Self.aliceBasic], status: 0)
                expectClean(
                    try await run(CLI.binary, ["get", good.baseURL + path, "-u", "alice:UserSecret-1", scheme, "-v"] + lab(good)),
                    ["UserSecret-1"], status: 67)
            }
            expectClean(try await run(CLI.binary, ["get", "https://127.0.0.1:1/", "-u", "alice:UserSecret-2", "-v"]), ["UserSecret-2"], status: 7)
        }
    }

    @Test func proxyUserFlag() async throws {
        let proxy = try await LabProxy.start(authentication: .basic)
        try await withTeardown({ try? await proxy.shutdown() }) {
            try await withLabServers(["good"]) { servers in
                let good = servers["good"]!
                expectClean(
                    try await run(CLI.binary, ["get", good.baseURL + "/", "-x", proxy.url, "-U", "alice:wonderland", "-v"] + lab(good)),
                    ["wonderland", Self.aliceBasic], status: 0)
                expectClean(
                    try await run(CLI.binary, ["get", good.baseURL + "/", "-x", proxy.url, "-U", "alice:ProxySecret-1", "-v"] + lab(good)),
                    ["ProxySecret-1"], status: 67)
                expectClean(
                    try await run(CLI.binary, ["get", good.baseURL + "/", "-x", "http://127.0.0.1:1", "-U", "alice:ProxySecret-2", "-v"] + lab(good)),
                    ["ProxySecret-2"], status: 7)
            }
        }
    }

    /// `-x http://user:password@host`: user-info is not shown, user name included.
    @Test func proxyURLUserInfo() async throws {
        let proxy = try await LabProxy.start(authentication: .basic)
        try await withTeardown({ try? await proxy.shutdown() }) {
            try await withLabServers(["good"]) { servers in
                let good = servers["good"]!
                let withUser = proxy.url.replacingOccurrences(of: "http://", with: "http://alice:wonderland@")
                expectClean(
                    try await run(CLI.binary, ["get", good.baseURL + "/", "-x", withUser, "-v"] + lab(good)),
                    ["wonderland", Self.aliceBasic, "alice:"], status: 0)
                expectClean(
                    try await run(CLI.binary, ["get", good.baseURL + "/", "-x", "http://proxyuser-9:ProxySecret-3@127.0.0.1:1", "-v"] + lab(good)),
                    ["ProxySecret-3", "proxyuser-9"], status: 7)
                expectClean(
                    try await run(CLI.binary, ["get", good.baseURL + "/", "-x", "http://proxyuser-9:ProxySecret-4@", "-v"]),
                    ["ProxySecret-4", "proxyuser-9"], status: 5)  // curl's "Unsupported proxy syntax"
            }
        }
    }

    /// `https://user:password@host/`: user-info is not shown, in errors, `-v` or `-w %{url_effective}`.
    @Test func urlUserInfo() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let url = good.baseURL.replacingOccurrences(of: "https://", with: "https://alice:wonderland@") + "/basic"
            let ok = try await run(CLI.binary, ["get", url, "-v", "-w", "%{url_effective}"] + lab(good))
            expectClean(ok, ["wonderland", Self.aliceBasic], status: 0)
            #expect(!ok.2.contains("alice:"))
            expectClean(
                try await run(CLI.binary, ["get", "https://urluser-7:UrlSecret-5@127.0.0.1:1/", "-v", "-w", "%{url_effective}"]),
                ["UrlSecret-5", "urluser-7"], status: 7)
            expectClean(try await run(CLI.binary, ["get", "https://urluser-7:UrlSecret-6@[bad/", "-v"]), ["UrlSecret-6", "urluser-7"], status: 3)
            let wrong = good.baseURL.replacingOccurrences(of: "https://", with: "https://urluser-7:UrlSecret-7@") + "/basic"
            expectClean(try await run(CLI.binary, ["get", wrong, "-v", "--fail"] + lab(good)), ["UrlSecret-7", "urluser-7"], status: 22)
        }
    }

    /// A password holding `/`, `?` or `#` makes the URL unparseable (its RFC authority would end inside it): the
    /// error, `-v` and `-w` show it hidden whole, and so does `-x`. The redaction ended the authority at that
    /// character and printed the rest of the password.
    @Test(arguments: ["Sl/ashSecret-8", "Qu?estSecret-9", "Ha#shSecret-10"])
    func urlPasswordsWithDelimiters(password: String) async throws {
        let secret = String(password.split(whereSeparator: { "/?#".contains($0) }).last ?? "")
        let url = try await run(CLI.binary, ["get", "https://urluser-11:\(password)@127.0.0.1:1/", "-v", "-w", "%{url_effective} %{errormsg}"])
        expectClean(url, [secret, "urluser-11"], status: 3)
        #expect(url.2.contains("https://***@127.0.0.1:1/"), "\(url.2)")
        let proxy = try await run(CLI.binary, ["get", "https://127.0.0.1:1/", "-x", "http://proxyuser-12:\(password)@127.0.0.1:1", "-v"])
        #expect(![Int32(0), 2].contains(proxy.0), "\(proxy)")
        expectClean(proxy, [secret, "proxyuser-12"], status: proxy.0)
        // inspect and evaluate quote what they were given the same way.
        let inspect = try await run(CLI.binary, ["inspect", "http://urluser-11:\(password)@127.0.0.1:1/"])
        expectClean(inspect, [secret, "urluser-11"], status: inspect.0)
    }

    /// A combining mark right after a delimiter (`:`, `@`) makes one `Character` with it, which is not the
    /// delimiter: a parser comparing `Character`s would not split there, and would print the whole argument
    /// — password included — in its error. Each delimiter is found by byte, as curl finds it.
    @Test func combiningMarkAfterDelimiter() async throws {
        let mark = "\u{301}"
        let missing = "/missing-\(UUID().uuidString).p12"
        let cert = try await run(CLI.binary, ["get", "https://127.0.0.1:1/", "--cert", missing + ":" + mark + "MarkSecret-1", "-v"])
        expectClean(cert, ["MarkSecret-1"], status: 58)
        #expect(cert.2.contains(missing), "\(cert.2)")
        expectClean(
            try await run(CLI.binary, ["get", "https://urluser-8:MarkSecret-2@" + mark + "127.0.0.1:1/", "-v"]), ["MarkSecret-2", "urluser-8"], status: 3)
        expectClean(try await run(CLI.binary, ["get", "https://urluser-8:MarkSecret-3" + mark + "@[bad/", "-v"]), ["MarkSecret-3", "urluser-8"], status: 3)
        expectClean(
            try await run(CLI.binary, ["get", "https://127.0.0.1:1/", "-x", "http://proxyuser-9:MarkSecret-4@" + mark + "bad", "-v"]),
            ["MarkSecret-4", "proxyuser-9"], status: 5)  // a malformed proxy URL
        // `-u USER:PASSWORD` splits at the first colon whatever follows it (curl's rule); the password is a secret.
        expectClean(try await run(CLI.binary, ["get", "https://127.0.0.1:1/", "-u", "alice:" + mark + "MarkSecret-5", "-v"]), ["MarkSecret-5"], status: 7)
        expectClean(
            try await run(CLI.binary, ["get", "https://127.0.0.1:1/", "-H", "Authorization:" + mark + " Bearer MarkSecret-6", "-v"]),
            ["MarkSecret-6"], status: 7)
    }

    /// `-H 'Authorization: …'`: `-v` shows the field with `***` for its value.
    @Test func authorizationHeader() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let ok = try await run(CLI.binary, ["get", good.baseURL + "/", "-H", "Authorization: Bearer HeaderSecret-1", "-v"] + lab(good))
            expectClean(ok, ["HeaderSecret-1"], status: 0)
            #expect(ok.2.contains("> Authorization: ***"), "\(ok.2)")
            expectClean(
                try await run(CLI.binary, ["get", "https://127.0.0.1:1/", "-H", "authorization: Basic HeaderSecret-2", "-v"]),
                ["HeaderSecret-2"], status: 7)
        }
    }

    @Test func proxyAuthorizationHeader() async throws {
        let proxy = try await LabProxy.start(authentication: .none)
        try await withTeardown({ try? await proxy.shutdown() }) {
            try await withLabServers(["good"]) { servers in
                let good = servers["good"]!
                let ok = try await run(
                    CLI.binary, ["get", good.baseURL + "/", "-x", proxy.url, "-H", "Proxy-Authorization: Basic HeaderSecret-3", "-v"] + lab(good))
                expectClean(ok, ["HeaderSecret-3"], status: 0)
                #expect(ok.2.contains("> Proxy-Authorization: ***"), "\(ok.2)")
                expectClean(
                    try await run(CLI.binary, ["get", "https://127.0.0.1:1/", "-H", "Proxy-Authorization: Basic HeaderSecret-4", "-v"]),
                    ["HeaderSecret-4"], status: 7)
            }
        }
    }
}

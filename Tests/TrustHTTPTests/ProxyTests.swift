import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

@Suite("Proxies: CONNECT tunnels, absolute form, 407 challenges, NO_PROXY", .serialized, .timeLimit(.minutes(5)), .paced)
struct ProxyTests {
    static let alice = Credential(user: "alice", password: "wonderland", persistence: .none)

    @Test func tunnelsHTTPSAndForwardsHTTP() async throws {
        let proxy = try await LabProxy.start()
        let good = try await LabServer.start("good", pki: Lab.pki)
        let plain = try await LabServer.startPlain(name: "plain")
        let session = try labSession { $0.proxy = try? ProxyConfiguration(url: proxy.url) }
        let secure = try await session.data(for: TrustHTTPClientRequest(url: url(good, "/")))
        #expect(secure.statusCode == 200 && secure.text == "hello from good\n")
        #expect(secure.serverTrust?.isTrusted == true)  // our trust evaluation, end to end through the tunnel
        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(plain, "/echo"), method: "POST", body: .text("hi"))).text == "POST\nhi")
        let lines = proxy.requests
        #expect(lines.contains("CONNECT good.lab.test:\(good.port)"), "\(lines)")
        #expect(lines.contains("POST http://plain.lab.test:\(plain.port)/echo"), "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("GET /") })  // nothing of the https exchange is visible to the proxy
        await session.shutdown()
        try await proxy.shutdown()
        try await good.shutdown()
        try await plain.shutdown()
    }

    @Test(arguments: LabProxy.Authentication.allCases)
    func proxyAuthenticationThroughTheChallengeModel(_ authentication: LabProxy.Authentication) async throws {
        let proxy = try await LabProxy.start(authentication: authentication)
        let good = try await LabServer.start("good", pki: Lab.pki)
        let plain = try await LabServer.startPlain(name: "plain")
        // Credentials configured for the proxy: sent when it asks, never to the origin.
        let configured = try labSession { $0.proxy = try? ProxyConfiguration(url: proxy.url, credential: Self.alice) }
        let headers = try await configured.data(for: TrustHTTPClientRequest(url: url(good, "/headers")))
        #expect(headers.statusCode == 200, "\(headers.text)")
        #expect(!headers.text.lowercased().contains("proxy-authorization"))
        #expect(try await configured.data(for: TrustHTTPClientRequest(url: url(plain, "/"))).statusCode == 200)
        await configured.shutdown()
        guard authentication != .none else {
            try await proxy.shutdown()
            try await good.shutdown()
            try await plain.shutdown()
            return
        }
        // A handler answers; the protection space is the proxy's. Basic to a plain-http proxy is
        // clear text: only with a credential configured for that proxy, or when allowed.
        if authentication == .basic {
            let strict = try labSession {
                $0.proxy = try? ProxyConfiguration(url: proxy.url)
                $0.challengeHandler = RecordingHandler { _ in .useCredential(Self.alice) }
            }
            #expect(await sessionError { try await strict.data(for: TrustHTTPClientRequest(url: url(good, "/"))) }?.code == .userAuthenticationRequired)
            await strict.shutdown()
        }
        let handler = RecordingHandler { _ in .useCredential(Self.alice) }
        let asking = try labSession {
            $0.proxy = try? ProxyConfiguration(url: proxy.url)
            $0.challengeHandler = handler
            $0.allowsCredentialsOverHTTP = authentication == .basic
        }
        #expect(try await asking.data(for: TrustHTTPClientRequest(url: url(good, "/"))).statusCode == 200)
        let space = try #require(handler.challenges.first?.protectionSpace)
        #expect(space.isProxy && space.host == "127.0.0.1" && space.port == proxy.port && space.realm == "lab proxy")
        #expect(space.authenticationMethod == (authentication == .basic ? .httpBasic : .httpDigest))
        await asking.shutdown()
        // A wrong proxy password ends, bounded, with the 407.
        let wrong = RecordingHandler { _ in .useCredential(Credential(user: "alice", password: "nope", persistence: .none)) }
        let refused = try labSession {
            $0.proxy = try? ProxyConfiguration(url: proxy.url)
            $0.challengeHandler = wrong
            $0.allowsCredentialsOverHTTP = true
        }
        #expect(try await refused.data(for: TrustHTTPClientRequest(url: url(good, "/"))).statusCode == 407)
        #expect(wrong.challenges.map(\.previousFailureCount) == [0, 1])
        await refused.shutdown()
        try await proxy.shutdown()
        try await good.shutdown()
        try await plain.shutdown()
    }

    @Test func noProxyAndTheEnvironment() async throws {
        let proxy = try await LabProxy.start()
        let good = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession { $0.proxy = try? ProxyConfiguration(url: proxy.url, noProxy: [".lab.test"]) }
        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(good, "/"))).statusCode == 200)
        #expect(proxy.requests.isEmpty)
        await session.shutdown()
        try await proxy.shutdown()
        try await good.shutdown()

        let environment = ProxyConfiguration.environment([
            "https_proxy": "http://u:p@proxy.example:3128", "HTTP_PROXY": "proxy.example", "NO_PROXY": "internal.example, 10.0.0.1,*.corp:8443",
        ])
        #expect(environment.https?.description == "http://proxy.example:3128")
        #expect(environment.https?.credential?.description.contains("u") == true)
        #expect(environment.http == nil)  // HTTP_PROXY is never read (httpoxy): ProxyEnvironmentTests
        let https = try #require(environment.https)
        #expect(https.applies(toHost: "api.example.com", port: 443))
        #expect(!https.applies(toHost: "internal.example", port: 443))
        #expect(!https.applies(toHost: "a.internal.example", port: 443))
        #expect(https.applies(toHost: "notinternal.example", port: 443))
        #expect(!https.applies(toHost: "10.0.0.1", port: 80))
        #expect(!https.applies(toHost: "x.corp", port: 8443) && https.applies(toHost: "x.corp", port: 443))
        #expect(throws: ProxyConfiguration.Problem.unsupportedScheme("socks5")) { try ProxyConfiguration(url: "socks5://h:1") }
        #expect(ProxyConfiguration.environment(["no_proxy": "*", "https_proxy": "h:1"]).https?.applies(toHost: "any", port: 1) == false)
    }

    @Test func cliProxyFlags() async throws {
        let proxy = try await LabProxy.start(authentication: .digest)
        let good = try await LabServer.start("good", pki: Lab.pki)
        let base = ["get", good.baseURL + "/", "--resolve", "good.lab.test:\(good.port):127.0.0.1", "--cacert", CLI.lab + "/roots.pem", "-x", proxy.url]
        let (status, out, err) = try await run(CLI.binary, base + ["-U", "alice:wonderland"])
        #expect(status == 0, "\(err)")
        #expect(out == "hello from good\n")
        #expect(try await run(CLI.binary, base + ["--proxy-user", "alice:wrong"]).0 == 67)
        #expect(try await run(CLI.binary, base).0 == 56)  // CONNECT refused with 407, no credentials given
        #expect(try await run(CLI.binary, base + ["--noproxy", "good.lab.test"]).0 == 0)
        #expect(try await run(CLI.binary, ["get", good.baseURL + "/", "-x", "socks5://127.0.0.1:1"]).0 == 97)  // a proxy trust cannot speak: curl's CURLE_PROXY
        #expect(try await run(CLI.binary, ["get", good.baseURL + "/", "--cacert", CLI.lab + "/roots.pem", "-x", "http://127.0.0.1:1"]).0 == 7)
        #expect(proxy.requests.contains("CONNECT good.lab.test:\(good.port)"))
        try await proxy.shutdown()
        try await good.shutdown()
    }
}

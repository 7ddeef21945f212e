import ClientRecipes
import Foundation
import Testing
import Trust
import TrustHTTP
import TrustLab
import TrustLabPKI

@Suite struct PinRolloutTests {
    @Test("report-only pins: the request succeeds, the collector gets one report and reads it")
    func reportOnly() async throws {
        try await RecipesLab.withTemporaryFolder { folder in
            try RecipesLab.writeRoots(into: folder)
            let server = try await LabServer.start("good", pki: RecipesLab.pki)
            let collector = try await LabServer.start("good", pki: RecipesLab.pki)
            // Pins of keys the server does not hold: the rollout's new keys, not yet deployed.
            let newPins = [RecipesLab.pki.otherRoot.certificate.spkiPin, try SPKIPin(digest: [UInt8](repeating: 3, count: 32))]
            let file = folder.appendingPathComponent("trust.json")
            let json = """
                {"version": 1, "hosts": [{"host": "good.lab.test", "anchors": {"certificates": ["lab-roots.pem"], "replaceSystem": true},
                  "mode": "report-only", "pins": {"sha256": ["\(newPins[0])", "\(newPins[1])"], "expires": "2099-01-01T00:00:00Z"},
                  "reportURIs": ["https://good.lab.test:\(collector.port)/reports"]}]}
                """
            try Data(json.utf8).write(to: file)

            // What the evaluator says of the server's chain: a report-only mismatch is a warning, not a refusal.
            let evaluation = await (try ConfiguredTrustEvaluator(contentsOf: file.path)).evaluation(
                for: try ServerTrust(presentedChain: #require(RecipesLab.pki.presentedChains["good"]), host: "good.lab.test"), port: server.port)
            #expect(evaluation.decision.isTrusted && evaluation.warnings.contains { $0.hasPrefix("report-only: ") }, "\(evaluation.warnings)")
            let reporter = PinRollout.reporter(configuration: try RecipesLab.configuration())
            let client = try TrustHTTPClient(
                configuration: RecipesLab.configuration {
                    $0.serverTrust = try ConfiguredTrustEvaluator(contentsOf: file.path)
                    $0.pinFailureReporter = reporter
                })
            let outcome = await Result { try await client.data(for: TrustHTTPClientRequest(url: RecipesLab.url(server, "/"))) }
            await client.shutdown()
            await reporter.flush()
            try await server.shutdown()
            try await collector.shutdown()

            #expect(try outcome.get().status == .ok)
            #expect(reporter.limits.maximumURIs == 2)
            let received = collector.reports.reports
            #expect(received.count == 1)
            let finding = try #require(received.first.flatMap(PinRollout.finding(in:)))
            #expect(finding.host == "good.lab.test" && finding.port == server.port && !finding.enforced)
            #expect(Set(finding.knownPins) == Set(newPins.map { "pin-sha256=\"\($0.base64)\"" }) || Set(finding.knownPins) == Set(newPins.map(\.description)))
            #expect(finding.served == 2 && finding.validated == 3, "\(finding)")
            #expect(finding.pinsExpire?.hasPrefix("2099-01-01") == true)
            #expect(PinRollout.finding(in: Data("not json".utf8)) == nil)
            #expect(PinRollout.quietPeriod == 24 * 3600)
        }
    }
}

@Suite struct OutboundProxyTests {
    @Test("requests leave through the proxy with its login; listed hosts go direct; an unusable proxy is refused")
    func egress() async throws {
        let proxy = try await LabProxy.start(authentication: .basic)
        #expect(proxy.authentication == .basic)
        let egress = OutboundProxy(url: proxy.url, user: "alice", password: "wonderland", direct: ["other.lab.test"])
        #expect(egress.directHosts == ["other.lab.test"])
        try await RecipesLab.withServer("good", configure: { $0 = egress.configuration($0) }) { server, client in
            let url = try RecipesLab.url(server, "/")
            #expect(egress.route(for: url) == "via http://127.0.0.1:\(proxy.port)")
            #expect(try await client.data(for: TrustHTTPClientRequest(url: url)).status == .ok)
            #expect(proxy.requests.contains { $0.hasPrefix("CONNECT good.lab.test:\(server.port)") })
            // The proxy's login is never in what the proxy logs of the tunnelled request, nor in the route.
            #expect(!egress.route(for: url).contains("wonderland"))
        }
        try await proxy.shutdown()
        #expect(try egress.route(for: #require(URL(string: "https://other.lab.test/x"))) == "direct")

        let unusable = OutboundProxy(url: "socks5://127.0.0.1:1080")
        let route = try unusable.route(for: #require(URL(string: "https://good.lab.test/")))
        #expect(route.hasPrefix("refused: egress.proxy"))
        #expect(OutboundProxy.single(url: "socks5://127.0.0.1:1080", direct: []) == nil)
        let single = try #require(OutboundProxy.single(url: "http://127.0.0.1:3128", direct: [".lab.test"]))
        #expect(!single.applies(toHost: "good.lab.test", port: 443) && single.applies(toHost: "example.com", port: 443))
    }
}

@Suite struct ResilienceTests {
    static let good = RecipesLab.pki.servers["good"]

    /// An upstream that dies at each point of the exchange is sorted as the service must act on it.
    @Test(
        "a dying upstream is sorted: lost handshakes and bodies are retryable, never a refusal",
        arguments: [LabFaultServer.Fault.closeAfterClientHello, .closeMidBody, .http2GoAway])
    func dyingUpstream(_ fault: LabFaultServer.Fault) async throws {
        let identity = try #require(Self.good)
        let server = try await LabFaultServer.start(fault, host: "good.lab.test", chain: identity.chain, privateKey: identity.privateKey)
        let client = try TrustHTTPClient(configuration: RecipesLab.configuration())
        let url = try #require(URL(string: server.baseURL + "/"))
        let outcome = await Result { try await client.data(for: TrustHTTPClientRequest(url: url)) }
        await client.shutdown()
        try await server.shutdown()
        guard case .failure(let error as TrustHTTPClientError) = outcome else {
            Issue.record("\(fault): expected a TrustHTTPClientError, got \(outcome)")
            return
        }
        let failure = UpstreamFailure(error)
        switch fault {
        case .closeAfterClientHello: #expect(failure.kind == .handshake("the upstream closed the connection during the handshake"), "\(failure)")
        case .closeMidBody: #expect(failure.kind == .unreachable(truncated: true), "\(failure)")
        default: #expect(failure.kind == .unreachable(truncated: false), "\(failure)")
        }
        #expect(failure.isRetryable == (fault != .closeAfterClientHello))
        #expect(server.acceptedConnections >= 1)
    }

    @Test("an upstream that never finishes its handshake is a timeout, retryable")
    func stalledHandshake() async throws {
        let identity = try #require(Self.good)
        let server = try await LabFaultServer.start(.stallHandshake, host: "good.lab.test", chain: identity.chain, privateKey: identity.privateKey)
        let client = try TrustHTTPClient(configuration: RecipesLab.configuration { $0.connectTimeout = .milliseconds(300) })
        let url = try #require(URL(string: server.baseURL + "/"))
        let error = await #expect(throws: TrustHTTPClientError.self) { try await client.data(for: TrustHTTPClientRequest(url: url)) }
        await client.shutdown()
        try await server.shutdown()
        let failure = UpstreamFailure(try #require(error))
        #expect(failure.kind == .timedOut && failure.isRetryable)
    }
}

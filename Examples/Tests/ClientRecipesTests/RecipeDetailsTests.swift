import ClientRecipes
import Foundation
import Logging
import NIOSSL
import PinnedTLSStream
import Testing
import Trust
import TrustHTTP
import TrustLab
import TrustLabPKI
import TrustNIO

/// The smaller parts of the recipes: what they log, their helpers, their refusals.
@Suite struct RecipeDetailsTests {
    @Test("progress lines, a bounded head, and saved logins kept in memory only")
    func downloadsAndLogins() async throws {
        #expect(Downloads.progressLine(DownloadProgress(bytesWritten: 12 * 1024, expectedBytes: 48 * 1024)) == "12.0 KiB of 48.0 KiB (25%)")
        #expect(Downloads.progressLine(DownloadProgress(bytesWritten: 2048, expectedBytes: nil)) == "2.0 KiB")
        try await RecipesLab.withServer("good") { server, client in
            let head = try await Downloads(client: client).head(of: RecipesLab.url(server, "/bytes/100"), limit: 1000)
            #expect(head.body.readableBytes == 100)
            let error = await #expect(throws: TrustHTTPClientError.self) {
                try await Downloads(client: client).head(of: RecipesLab.url(server, "/bytes/5000"), limit: 1000)
            }
            #expect(error?.code == .responseTooLarge)
        }
        let logins = SavedLogins.inMemory()
        let url = try #require(URL(string: "https://api.example.com/x"))
        let space = try #require(SavedLogins.space(for: url, realm: "api"))
        try logins.remember(user: "alice", password: "wonderland", for: space)
        #expect(logins.login(for: space)?.isUser == true && logins.store.fileURL == nil)
    }

    @Test("egress helpers: exceptions, the process environment, one proxy for every scheme")
    func egress() {
        let egress = OutboundProxy(url: "http://proxy.internal:3128", direct: [".svc", "10.0.0.0/8"])
        #expect(egress.isDirect(host: "api.default.svc", port: 443) && egress.isDirect(host: "10.1.2.3", port: 80))
        #expect(!egress.isDirect(host: "example.com", port: 443))
        let environment = OutboundProxy.environmentProxies(["https_proxy": "http://corp-proxy:8080", "NO_PROXY": "localhost"])
        #expect(environment.https == "http://corp-proxy:8080" && environment.http == nil)
        let single = OutboundProxy.single(host: "proxy.internal", port: 3128, user: "svc", password: "s3cret", direct: ["internal.example"])
        #expect(single.applies(toHost: "example.com", port: 443) && !single.applies(toHost: "internal.example", port: 443))
        #expect(!"\(single)".contains("s3cret"))
    }

    @Test("the runbook lists every code once, with its fix")
    func runbook() {
        let lines = UpstreamFailure.runbook()
        #expect(lines.count == TrustHTTPClientError.Code.allCases.count)
        #expect(lines.contains { $0.hasPrefix("serverCertificateUntrusted (-1202): ") && $0.contains("Fix: ") })
    }

    @Test("the upstream client's summary, reload endpoint and bounded retries")
    func upstreamClient() async throws {
        try await RecipesLab.withTemporaryFolder { folder in
            let file = folder.appendingPathComponent("trust.json")
            let roots = RecipesLab.rootsJSON
            try Data(#"{"version": 1, "hosts": [{"host": "**.lab.test", "anchors": {"pem": [\#(roots)], "replaceSystem": true}}]}"#.utf8).write(to: file)
            var logger = Logger(label: "upstream")
            logger.logLevel = .critical
            let upstream = try UpstreamClient(trustFile: file.path, logger: logger) { $0.resolve = LabPKI.loopbackResolve }
            #expect(upstream.trustFile == file.path)
            #expect(upstream.summary.contains("decompression: at most 20x") && upstream.summary.contains("evaluation cache: 256 decisions for 600.0 seconds"))
            // Unchanged: nothing taken; forced (its anchor files were replaced, say): taken again as generation 2.
            #expect(try upstream.reloadNow(force: false).get() == nil)
            #expect(try upstream.reloadNow(force: true).get() == 2)
            try Data("{".utf8).write(to: file)
            guard case .failure(let rejection) = upstream.reloadNow(force: true) else {
                Issue.record("a broken file was taken")
                return
            }
            #expect(rejection.code == "malformed")

            let server = try await LabServer.start("good", pki: RecipesLab.pki)
            let ok = await Result { try await upstream.send(TrustHTTPClientRequest(url: RecipesLab.url(server, "/")), retries: 2) }
            try await server.shutdown()
            // A port that listened once and no longer does, never connected to by this client.
            let gone = try await LabServer.start("good", pki: RecipesLab.pki)
            let port = gone.port
            try await gone.shutdown()
            // Nothing listens any more: each try fails to connect, and is made again up to the bound.
            let refused = await Result {
                try await upstream.send(TrustHTTPClientRequest(url: try #require(URL(string: "https://good.lab.test:\(port)/"))), retries: 2)
            }
            await upstream.client.shutdown()
            #expect(try ok.get().status == .ok)
            guard case .failure(let error as TrustHTTPClientError) = refused else {
                Issue.record("a closed port answered: \(refused)")
                return
            }
            #expect(error.code == .cannotConnectToHost)
        }
    }

    @Test("the reporter's limits, the updates' limits and keys, the API's summary and a bad path")
    func summaries() async throws {
        #expect(
            PinRollout.describe(PinRollout.reporter(configuration: TrustHTTPClientConfiguration()))
                == "pin reports: up to 2 endpoints each, 3.0 seconds per report, 8 at a time")
        let key = try TrustBundlePublisher.signingKey(raw: [UInt8](repeating: 7, count: 32))
        #expect(try SignedTrustUpdates.pinnedKeys(pem: [key.publicKey.pemRepresentation]) == [key.publicKey.base64])
        #expect(try TrustConfigurationPublicKey(rawRepresentation: key.publicKey.rawRepresentation) == key.publicKey)
        #expect(throws: (any Error).self) { try TrustBundlePublisher.signingKey(raw: [1, 2, 3]) }
        #expect(throws: TrustBundlePublisher.PublishingError.self) {
            try TrustBundlePublisher.publish(configurationFile: "/nonexistent/trust.json", sequence: 1, expires: Date(), key: key)
        }

        try await RecipesLab.withServer("good") { server, client in
            let api = StatusAPI(serverURL: try RecipesLab.url(server, ""), client: client)
            #expect(api.summary.hasSuffix("single-pass request bodies up to 1048576 bytes"))
            #expect(try await api.get(rawPath: "/status/201") == .created)
            await #expect(throws: StatusAPI.StatusAPIError.self) { try await api.get(rawPath: "status/200") }
        }
    }

    @Test("pins and a second evaluator both; a mesh's summary; an operator's certificate by its DNS name; an empty chain")
    func evaluators() async throws {
        let pki = RecipesLab.pki
        let keys = try PinningStrategy.issuerKeys(
            current: pki.intermediate.certificate, backup: pki.otherRoot.certificate.spkiPin, anchors: .only(pki.trustedRoots))
        let both = try PinningStrategy.both(keys, and: DefaultTrustEvaluator(anchors: .only([pki.root.certificate])))
        #expect(PinningStrategy.describe(both) == "all of 2 evaluators: PublicKeysTrustEvaluator, DefaultTrustEvaluator")
        let good = try #require(pki.servers["good"])
        #expect(await both.evaluate(try ServerTrust(presentedChain: good.chain, host: "good.lab.test")).isTrusted)

        let mesh = try MeshIdentity(trustDomain: "lab.test", anchors: [pki.root.certificate])
        #expect(mesh.summary == "trust domain lab.test: 1 authorities")
        let runner = try pki.intermediate.leaf(dnsNames: ["ops-runner.lab.test"], extendedKeyUsage: [.clientAuth])
        #expect(try mesh.role(of: #require(VerifiedClient(validatedPath: runner.chain + [pki.root.certificate]))) == .batch)

    }

    @Test("a client certificate from the login handler when the server asks for one")
    func handlerPresentsIdentity() async throws {
        let identity = try #require(RecipesLab.pki.clients["client"])
        let clientIdentity = try ClientIdentity(certificateChainPEM: identity.chainPEM, privateKeyPEM: identity.privateKeyPEM)
        let server = try await LabServer.start(mutualTLS: .required, pki: RecipesLab.pki)
        let client = try TrustHTTPClient(configuration: RecipesLab.configuration())
        var request = TrustHTTPClientRequest(url: try RecipesLab.url(server, "/whoami"))
        // Task level: this request only.
        request.challengeHandler = LoginChallengeHandler(accounts: [], clientIdentity: clientIdentity)
        let answer = await Result { try await client.data(for: request).text }
        await client.shutdown()
        try await server.shutdown()
        #expect(try answer.get().hasPrefix("client: "))
    }
}

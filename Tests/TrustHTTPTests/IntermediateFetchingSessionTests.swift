import Foundation
import HTTPTypes
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustLabPKI
import TrustTestSupport
import X509

@testable import TrustHTTP

/// A server that leaves out its intermediate, completed as iOS completes it: the issuer fetched from the leaf's
/// Authority Information Access over real HTTP on loopback — by default, through the request's proxy, bounded in
/// size and time, cached as HTTP caching says — and refused with the fetch switched off.
@Suite("Missing intermediates fetched by the client (AIA)", .serialized, .timeLimit(.minutes(5)), .paced)
struct IntermediateFetchingSessionTests {
    static let host = "other.lab.test"

    /// A server for ``host`` presenting only a leaf of the lab intermediate whose issuer location is `location`.
    static func leafOnlyServer(_ location: String) async throws -> LabServer {
        let leaf = try Lab.pki.intermediate.leaf(dnsNames: [host], caIssuers: [location])
        return try await LabServer.start(name: "aia", host: host, chain: [leaf.certificate], privateKey: leaf.privateKey, protocols: .http1Only)
    }

    static func session(_ configure: (inout TrustHTTPClientConfiguration) -> Void = { _ in }) throws -> TrustHTTPClient {
        try labSession(configure: configure)
    }

    @Test(arguments: ["der", "p7c"])
    func aLeafOnlyServerIsTrustedWithItsFetchedIntermediate(_ format: String) async throws {
        let publisher = try await LabCRLServer.start()
        if format == "der" {
            publisher.publish(bytes: Lab.pki.intermediate.certificate.derBytes, as: "ca.der", contentType: "application/pkix-cert")
        } else {
            publisher.publish(bytes: try LabPKCS7.certsOnly([Lab.pki.intermediate.certificate]), as: "ca.der", contentType: "application/pkcs7-mime")
        }
        let server = try await Self.leafOnlyServer(publisher.url("ca.der"))
        // Off: refused, as curl and OpenSSL refuse it, and nothing is fetched.
        let off = try Self.session { $0.fetchesMissingIntermediates = false }
        let error = await #expect(throws: TrustHTTPClientError.self) { try await off.data(for: TrustHTTPClientRequest(url: url(server, "/"))) }
        #expect(error?.trustDecision?.codes == ["no-path-to-trusted-anchor"])
        #expect(publisher.requestCount("ca.der") == 0)
        await off.shutdown()
        // On by default: trusted on the completed path, the fetch named.
        let session = try Self.session()
        let response = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/")))
        #expect(response.statusCode == 200)
        let decision = try #require(response.serverTrust)
        #expect(decision.isTrusted && decision.validatedPath.count == 3 && decision.presentedChain.count == 1)
        #expect(decision.notes.contains { $0.contains("fetched") && $0.contains(publisher.url("ca.der")) }, "\(decision.notes)")
        #expect(publisher.requestCount("ca.der") == 1)
        await session.shutdown()
        try await server.shutdown()
        await publisher.shutdown()
    }

    /// A server for ``host`` presenting `chain`, whose leaf's key is `key`.
    static func server(_ chain: [Certificate], key: Certificate.PrivateKey) async throws -> LabServer {
        try await LabServer.start(name: "aia", host: host, chain: chain, privateKey: key, protocols: .http1Only)
    }

    @Test func twoMissingLevelsAreFetchedOverLoopback() async throws {
        let publisher = try await LabCRLServer.start()
        let upper = try Lab.pki.root.intermediate(commonName: "AIA upper CA")
        let lower = try upper.intermediate(commonName: "AIA lower CA", caIssuers: [publisher.url("upper.der")])
        let leaf = try lower.leaf(dnsNames: [Self.host], caIssuers: [publisher.url("lower.der")])
        publisher.publish(bytes: upper.certificate.derBytes, as: "upper.der", contentType: "application/pkix-cert")
        publisher.publish(bytes: lower.certificate.derBytes, as: "lower.der", contentType: "application/pkix-cert")
        let server = try await Self.server([leaf.certificate], key: leaf.privateKey)
        let session = try Self.session()
        let response = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/")))
        #expect(response.serverTrust?.validatedPath == [leaf.certificate, lower.certificate, upper.certificate, Lab.pki.root.certificate])
        #expect(publisher.requestCount("lower.der") == 1 && publisher.requestCount("upper.der") == 1)
        await session.shutdown()
        try await server.shutdown()
        await publisher.shutdown()
    }

    @Test func nothingIsFetchedForACompleteChain() async throws {
        let publisher = try await LabCRLServer.start()
        publisher.publish(bytes: Lab.pki.intermediate.certificate.derBytes, as: "ca.der", contentType: "application/pkix-cert")
        let leaf = try Lab.pki.intermediate.leaf(dnsNames: [Self.host], caIssuers: [publisher.url("ca.der")])
        let server = try await Self.server(leaf.chain, key: leaf.privateKey)
        let session = try Self.session()
        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server, "/"))).serverTrust?.isTrusted == true)
        #expect(publisher.requestCount("ca.der") == 0)
        await session.shutdown()
        try await server.shutdown()
        await publisher.shutdown()
    }

    @Test func refusedSchemesUnrelatedCertificatesAndLoopsOverLoopback() async throws {
        let publisher = try await LabCRLServer.start()
        publisher.publish(bytes: Lab.pki.intermediate.certificate.derBytes, as: "ca.der", contentType: "application/pkix-cert")
        publisher.publish(bytes: Lab.pki.otherRoot.certificate.derBytes, as: "unrelated.der", contentType: "application/pkix-cert")
        let looping = try Lab.pki.untrustedRoot.intermediate(commonName: "AIA looping CA", caIssuers: [publisher.url("loop.der")])
        publisher.publish(bytes: looping.certificate.derBytes, as: "loop.der", contentType: "application/pkix-cert")
        // The publisher's own port under another scheme: were it fetched, the publisher would count it.
        let https = "https://127.0.0.1:\(publisher.port)/ca.der"
        let cases: [(leaf: LabIdentity, note: String, counted: String, expected: Int)] = [
            (try Lab.pki.intermediate.leaf(dnsNames: [Self.host], caIssuers: [https]), "only http locations are fetched", "ca.der", 0),
            (try Lab.pki.intermediate.leaf(dnsNames: [Self.host], caIssuers: ["ldap://127.0.0.1/cn=CA"]), "only http locations", "ca.der", 0),
            (try Lab.pki.intermediate.leaf(dnsNames: [Self.host], caIssuers: ["file:///etc/ssl/certs/ca.der"]), "only http locations", "ca.der", 0),
            (try Lab.pki.intermediate.leaf(dnsNames: [Self.host], caIssuers: [publisher.url("unrelated.der")]), "gave no issuer", "unrelated.der", 1),
            (try looping.leaf(dnsNames: [Self.host], caIssuers: [publisher.url("loop.der")]), "a loop of issuers", "loop.der", 1),
        ]
        for (leaf, note, counted, expected) in cases {
            let before = publisher.requestCount(counted)
            let server = try await Self.server([leaf.certificate], key: leaf.privateKey)
            let session = try Self.session()
            let error = await #expect(throws: TrustHTTPClientError.self) { try await session.data(for: TrustHTTPClientRequest(url: url(server, "/"))) }
            let decision = error?.trustDecision
            #expect(decision?.codes == ["no-path-to-trusted-anchor"], "\(note): \(String(describing: decision?.reasons))")
            #expect(decision?.notes.contains { $0.contains(note) } == true, "\(note): \(decision?.notes ?? [])")
            #expect(publisher.requestCount(counted) - before == expected, "\(note)")
            await session.shutdown()
            try await server.shutdown()
        }
        await publisher.shutdown()
    }

    @Test func pinsAreJudgedOnTheCompletedPathOverLoopback() async throws {
        let publisher = try await LabCRLServer.start()
        publisher.publish(bytes: Lab.pki.intermediate.certificate.derBytes, as: "ca.der", contentType: "application/pkix-cert")
        let server = try await Self.leafOnlyServer(publisher.url("ca.der"))
        // The fetched intermediate's key is the pin: trusted once the path is complete.
        let pinned = try PublicKeysTrustEvaluator(pins: [Lab.pki.intermediate.certificate.spkiPin], anchors: Lab.anchors)
        let session = try labSession(pinned)
        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server, "/"))).serverTrust?.isTrusted == true)
        await session.shutdown()
        // A pin on no certificate of the completed path: refused for the pin.
        let wrong = try PublicKeysTrustEvaluator(pins: [Lab.pki.otherRoot.certificate.spkiPin], anchors: Lab.anchors)
        let refusing = try labSession(wrong)
        let error = await #expect(throws: TrustHTTPClientError.self) { try await refusing.data(for: TrustHTTPClientRequest(url: url(server, "/"))) }
        #expect(error?.trustDecision?.codes.contains("pin-mismatch") == true, "\(String(describing: error?.trustDecision?.codes))")
        await refusing.shutdown()
        try await server.shutdown()
        await publisher.shutdown()
    }

    @Test func anEndlessAnswerIsCutOffAtTheSizeLimit() async throws {
        let publisher = try await LabCRLServer.start()
        publisher.publishEndless(as: "endless.der")
        let server = try await Self.leafOnlyServer(publisher.url("endless.der"))
        let session = try Self.session()
        let error = await #expect(throws: TrustHTTPClientError.self) { try await session.data(for: TrustHTTPClientRequest(url: url(server, "/"))) }
        let notes = error?.trustDecision?.notes ?? []
        #expect(notes.contains { $0.contains("could not fetch") && $0.contains("responseTooLarge") }, "\(notes)")
        await session.shutdown()
        try await server.shutdown()
        await publisher.shutdown()
    }

    @Test func aStalledLocationEndsWithinTheRequestsDeadline() async throws {
        let publisher = try await LabCRLServer.start()
        publisher.publish(bytes: Lab.pki.intermediate.certificate.derBytes, as: "slow.der", contentType: "application/pkix-cert", delay: .seconds(120))
        let server = try await Self.leafOnlyServer(publisher.url("slow.der"))
        // The request's deadline comes first: it times out, whatever the fetch budget.
        let session = try Self.session { $0.intermediateFetchLimits.budget = .seconds(120) }
        var request = TrustHTTPClientRequest(url: url(server, "/"))
        request.timeout = .seconds(2)
        let error = await #expect(throws: TrustHTTPClientError.self) { try await session.data(for: request) }
        #expect(error?.code == .timedOut, "\(String(describing: error))")
        await session.shutdown()
        // The fetch budget comes first: refused, the budget named.
        let budgeted = try Self.session { $0.intermediateFetchLimits.budget = .milliseconds(500) }
        let refused = await #expect(throws: TrustHTTPClientError.self) { try await budgeted.data(for: TrustHTTPClientRequest(url: url(server, "/"))) }
        let notes = refused?.trustDecision?.notes ?? []
        // Which bound says so first on a loaded machine (the evaluator's timer, the fetch's own timeout, or the budget
        // spent before the fetch began) does not matter: each names a bound in time.
        #expect(notes.contains { $0.contains("the budget") || $0.contains("no answer in time") || $0.contains("no time left") }, "\(notes)")
        await budgeted.shutdown()
        try await server.shutdown()
        await publisher.shutdown()
    }

    @Test func theFetchGoesThroughTheRequestsProxyNeverDirect() async throws {
        let publisher = try await LabCRLServer.start()
        publisher.publish(bytes: Lab.pki.intermediate.certificate.derBytes, as: "proxied.der", contentType: "application/pkix-cert")
        let server = try await Self.leafOnlyServer(publisher.url("proxied.der"))
        let proxy = try await LabProxy.start()
        // The proxy's exceptions name the CA's host: the fetch still goes through the proxy the request uses.
        let session = try Self.session { $0.proxy = try? ProxyConfiguration(url: proxy.url, noProxy: ["127.0.0.1"]) }
        let response = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/")))
        #expect(response.serverTrust?.isTrusted == true)
        let lines = proxy.requests
        #expect(lines.contains { $0.hasPrefix("CONNECT \(Self.host):") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("GET \(publisher.url("proxied.der"))") }, "\(lines)")
        #expect(publisher.requestCount("proxied.der") == 1)
        await session.shutdown()
        try await proxy.shutdown()
        try await server.shutdown()
        await publisher.shutdown()
    }

    @Test func answersAreCachedAsHTTPCachingSays() async throws {
        let publisher = try await LabCRLServer.start()
        let der = Lab.pki.intermediate.certificate.derBytes
        publisher.publish(bytes: der, as: "kept.der", contentType: "application/pkix-cert", cacheControl: "public, max-age=600")
        publisher.publish(bytes: der, as: "unstored.der", contentType: "application/pkix-cert", cacheControl: "no-store")
        publisher.publish(bytes: der, as: "stale.der", contentType: "application/pkix-cert", cacheControl: "max-age=0")
        publisher.publish(bytes: der, as: "plain.der", contentType: "application/pkix-cert")
        let fetcher = HTTPIntermediateFetcher()
        let direct = fetcher.through(nil)
        for name in ["kept.der", "unstored.der", "stale.der", "plain.der"] {
            for _ in 0..<2 {
                let body = try await direct.fetch(try #require(URL(string: publisher.url(name))), maximumSize: 64 << 10, deadline: .now + .seconds(30))
                #expect(body == der)
            }
        }
        #expect(publisher.requestCount("kept.der") == 1)
        #expect(publisher.requestCount("unstored.der") == 2)
        #expect(publisher.requestCount("stale.der") == 2)
        #expect(publisher.requestCount("plain.der") == 1)
        #expect(fetcher.cachedCount == 2)
        // Nothing but http, whoever asks.
        await #expect(throws: HTTPIntermediateFetcher.Failure.self) {
            _ = try await direct.fetch(
                try #require(URL(string: "https://127.0.0.1:\(publisher.port)/kept.der")), maximumSize: 1 << 10, deadline: .now + .seconds(5))
        }
        await fetcher.shutdown()
        await publisher.shutdown()
    }

    /// One fetch per URL at a time, but no handshake held to another's deadline: the second asks while the first's
    /// fetch is under way (the server holds its answer for 2 s) and joins it; that fetch runs out of the first's 1 s,
    /// and the second, which has 20 s, fetches again within its own and gets the answer. (Before, the second failed
    /// with the first: "no answer in time".)
    @Test func aJoinedFetchThatRunsOutLeavesAWaiterWithMoreTimeItsOwn() async throws {
        let publisher = try await LabCRLServer.start()
        let der = Lab.pki.intermediate.certificate.derBytes
        publisher.publish(bytes: der, as: "slow.der", contentType: "application/pkix-cert", delay: .seconds(2))
        let fetcher = HTTPIntermediateFetcher()
        let direct = fetcher.through(nil)
        let location = try #require(URL(string: publisher.url("slow.der")))
        let first = Task { try await direct.fetch(location, maximumSize: 64 << 10, deadline: .now + .seconds(1)) }
        let clock = ContinuousClock()
        let start = clock.now
        while publisher.requestCount("slow.der") == 0 && start.duration(to: clock.now) < .seconds(1) { try await Task.sleep(for: .milliseconds(10)) }
        let joined = publisher.requestCount("slow.der") == 1
        let second = try await direct.fetch(location, maximumSize: 64 << 10, deadline: .now + .seconds(20))
        #expect(second == der)
        let failure = await #expect(throws: HTTPIntermediateFetcher.Failure.self) { try await first.value }
        #expect(failure?.ranOutOfTime == true, "\(String(describing: failure))")
        // The first's request seen before the second asked (the usual case): two requests, the first fetch and the
        // second's own. On a machine too loaded for that, the figure printed says so.
        if joined { #expect(publisher.requestCount("slow.der") == 2) }
        print("[fetch] the first's request was seen before the second asked: \(joined); requests: \(publisher.requestCount("slow.der"))")
        await fetcher.shutdown()
        await publisher.shutdown()
    }

    /// A configuration's pins on the intermediate the server leaves out: the chain as presented fails the pins, the
    /// completed path passes them. No pin-failure report goes out for the first look (before, one did).
    @Test func noPinFailureIsReportedForAChainCompletedByFetching() async throws {
        let publisher = try await LabCRLServer.start()
        publisher.publish(bytes: Lab.pki.intermediate.certificate.derBytes, as: "ca.der", contentType: "application/pkix-cert")
        let server = try await Self.leafOnlyServer(publisher.url("ca.der"))
        let endpoint = try StalledEndpoint()
        let root = Lab.pki.root.certificate.pemString
        // The intermediate's key, and the root's as the backup: neither is on the chain as presented.
        let pins = [Lab.pki.intermediate.certificate, Lab.pki.root.certificate].map { "\"\($0.spkiPin)\"" }.joined(separator: ", ")
        let text =
            #"{"version": 1, "hosts": [{"host": "\#(Self.host)", "anchors": {"pem": [\#(String(reflecting: root))], "replaceSystem": true}, "mode": "enforce", "pins": {"sha256": [\#(pins)]}, "reportURIs": ["\#(endpoint.url().absoluteString)"]}]}"#
        let evaluator = try ConfiguredTrustEvaluator(configuration: try TrustConfiguration.parse(text, publicSuffixes: nil))
        let reporter = PinFailureReporter(limits: PinFailureReporter.Limits(deliveryTimeout: .seconds(2), maximumInFlight: 4))
        let session = try labSession(evaluator, reporter: reporter)
        let response = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/")))
        #expect(response.serverTrust?.isTrusted == true)
        #expect(publisher.requestCount("ca.der") == 1)
        await reporter.flush()
        #expect(endpoint.connections == 0)
        await session.shutdown()
        endpoint.close()
        try await server.shutdown()
        await publisher.shutdown()
    }

    /// RFC 9111's figures are the answer's: any value, however large or malformed, gives a lifetime of 0…a week or
    /// none, never a trap (before, `max-age` of Int64.min with an `Age` overflowed).
    @Test func cachingFiguresAreClampedWhateverTheAnswerSays() throws {
        let url = try #require(URL(string: "http://ca.lab.test/i.der"))
        func freshness(_ headers: [(String, String)]) -> Duration? {
            var fields = HTTPFields()
            for (name, value) in headers { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
            return HTTPIntermediateFetcher.freshness(of: TrustHTTPClientResponse(url: url, statusCode: 200, headers: fields, httpVersion: .http1_1))
        }
        let week = Duration.seconds(7 * 86_400)
        #expect(freshness([("cache-control", "max-age=600")]) == .seconds(600))
        #expect(freshness([("cache-control", "max-age=\"600\"")]) == .seconds(600))
        #expect(freshness([("cache-control", "max-age=600"), ("age", "100")]) == .seconds(500))
        #expect(freshness([("cache-control", "max-age=99999999999999999999999")]) == week)
        #expect(freshness([("cache-control", "max-age=-9223372036854775808"), ("age", "1")]) == nil)
        #expect(freshness([("cache-control", "max-age=9223372036854775807"), ("age", "9223372036854775807")]) == .zero)
        #expect(freshness([("cache-control", "max-age=+5")]) == nil)
        #expect(freshness([("cache-control", "max-age=600"), ("age", "-9223372036854775808")]) == .seconds(600))
        #expect(freshness([("cache-control", "no-store, max-age=600")]) == nil)
        #expect(freshness([]) == .seconds(3_600))
        #expect(freshness([("age", "99999999999999999999")]) == .zero)
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        #expect(freshness([("date", date), ("expires", "Sun, 06 Nov 1994 09:49:37 GMT")]) == .seconds(3_600))
        #expect(freshness([("date", date), ("expires", "Fri, 31 Dec 9999 23:59:59 GMT"), ("age", "9223372036854775807")]) == .zero)
        #expect(freshness([("date", date), ("expires", "Mon, 01 Jan 0001 00:00:00 GMT")]) == nil)
        #expect(freshness([("expires", "0")]) == nil)
    }

    @Test func anHTTPDateIsReadStrictly() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        for bad in ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 32 Nov 1994 08:49:37 GMT", "0", ""] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad)")
        }
    }
}

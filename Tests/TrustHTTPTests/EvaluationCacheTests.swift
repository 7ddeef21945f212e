import Foundation
import NIOConcurrencyHelpers
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport
import X509

@Suite("Evaluation cache: faster, never a way around verification", .timeLimit(.minutes(5)), .paced)
struct EvaluationCacheTests {
    @Test func onlyIdenticalChainNameAndPolicyHit() async throws {
        let cache = TrustEvaluationCache()
        let counting = LabCountingEvaluator(DefaultTrustEvaluator(anchors: Lab.anchors))
        let evaluator = CachingTrustEvaluator(counting, cache: cache, policyIdentity: "lab")
        #expect(await evaluator.evaluate(Lab.trust("good")).isTrusted)
        #expect(await evaluator.evaluate(Lab.trust("good")).isTrusted)
        #expect(counting.count == 1)
        // Another name for the same chain, another policy, another chain: evaluated.
        #expect(await evaluator.evaluate(Lab.trust("good", host: "api.good.lab.test")).isTrusted)
        #expect(await CachingTrustEvaluator(counting, cache: cache, policyIdentity: "other").evaluate(Lab.trust("good")).isTrusted)
        #expect(await !evaluator.evaluate(Lab.trust("good", host: "evil.lab.test")).isTrusted)
        #expect(counting.count == 4)
        // Refusals are never cached; the append attack is refused every time.
        let pinned = CachingTrustEvaluator(
            LabCountingEvaluator(try PublicKeysTrustEvaluator(pins: [Lab.pki.intermediate.certificate.spkiPin], anchors: Lab.anchors)),
            cache: cache, policyIdentity: "pinned")
        for _ in 0..<3 { #expect(await !pinned.evaluate(Lab.trust("mitm")).isTrusted) }
        #expect(cache.statistics.entries == 3)
    }

    /// The validity boundary: a cached decision is never used past the earliest notAfter on its path, nor before notBefore.
    @Test func cachedDecisionNeverOutlivesThePathValidity() async throws {
        let cache = TrustEvaluationCache()
        let evaluator = CachingTrustEvaluator(DefaultTrustEvaluator(anchors: Lab.anchors), cache: cache, policyIdentity: "lab")
        let leaf = Lab.chain("good")[0]
        func trusted(at time: Date) async throws -> Bool {
            await evaluator.evaluate(try ServerTrust(presentedChain: Lab.chain("good"), host: "good.lab.test", evaluationTime: time)).isTrusted
        }
        #expect(try await trusted(at: Date()))
        #expect(try await trusted(at: leaf.notValidAfter))
        #expect(try await !trusted(at: leaf.notValidAfter.addingTimeInterval(1)))
        #expect(try await !trusted(at: leaf.notValidBefore.addingTimeInterval(-1)))
    }

    @Test func entriesExpireAfterTheirTimeToLiveAndTheCacheIsBounded() async throws {
        let counting = LabCountingEvaluator(DefaultTrustEvaluator(anchors: Lab.anchors))
        let shortLived = CachingTrustEvaluator(counting, cache: TrustEvaluationCache(capacity: 1, timeToLive: .milliseconds(50)), policyIdentity: "lab")
        _ = await shortLived.evaluate(Lab.trust("good"))
        try await Task.sleep(for: .milliseconds(100))
        _ = await shortLived.evaluate(Lab.trust("good"))
        #expect(counting.count == 2)
        _ = await shortLived.evaluate(Lab.trust("ip-only", host: "127.0.0.1"))
        #expect(shortLived.cache.statistics.entries == 1)
    }

    /// With the cache on, every new connection still raises the server-trust challenge, and a
    /// refused chain is refused on every connection.
    @Test func sessionStillAsksOnEveryNewConnection() async throws {
        try await withLabServers(["good", "mitm"], protocols: .http1Only) { servers in
            let challenges = NIOLockedValueBox(0)
            let counting = LabCountingEvaluator(try PublicKeysTrustEvaluator(pins: [Lab.pki.intermediate.certificate.spkiPin], anchors: Lab.anchors))
            let session = try labSession(counting) { configuration in
                configuration.challengeHandler = ClosureChallengeHandler { _ in
                    challenges.withLockedValue { $0 += 1 }
                    return .performDefaultHandling
                }
            }
            try await withTeardown({ await session.shutdown() }) { () async throws in
                for _ in 0..<3 {
                    #expect(
                        try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!), headers: [.connection: "close"])).statusCode == 200)
                    let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(servers["mitm"]!))) }
                    #expect(error?.trustDecision?.reasons.first?.code == "pin-mismatch")
                }
                #expect(challenges.withLockedValue { $0 } == 6)
                #expect(counting.count == 4)  // good once (then cached), mitm three times
                #expect(session.evaluationCache?.statistics.hits == 2)
            }
        }
    }

    /// The key is every byte of every certificate: the genuine chain cached, a leaf with the same
    /// to-be-signed bytes and a tampered signature is still evaluated (and refused), every time.
    @Test func aTamperedSignatureNeverHitsTheGenuineEntry() async throws {
        let cache = TrustEvaluationCache()
        let counting = LabCountingEvaluator(DefaultTrustEvaluator(anchors: Lab.anchors))
        let evaluator = CachingTrustEvaluator(counting, cache: cache, policyIdentity: "lab")
        let chain = Lab.chain("good")
        #expect(await evaluator.evaluate(try ServerTrust(presentedChain: chain, host: "good.lab.test")).isTrusted)
        var der = chain[0].derBytes
        der[der.count - 1] ^= 0x01  // the last byte of the ECDSA signature's s
        let forged = try Certificate(derEncoded: der)
        #expect(forged.tbsCertificateBytes == chain[0].tbsCertificateBytes)
        for _ in 0..<3 {
            let decision = await evaluator.evaluate(try ServerTrust(presentedChain: [forged] + chain.dropFirst(), host: "good.lab.test"))
            #expect(!decision.isTrusted)
        }
        #expect(counting.count == 4)
        #expect(cache.statistics.hits == 0)
    }

    /// Bounded by least recent *use*: with room for two, the entry used last survives a third.
    @Test func theLeastRecentlyUsedEntryGoesFirst() async throws {
        let counting = LabCountingEvaluator(DefaultTrustEvaluator(anchors: Lab.anchors))
        let cache = TrustEvaluationCache(capacity: 2)
        let evaluator = CachingTrustEvaluator(counting, cache: cache, policyIdentity: "lab")
        let a = Lab.trust("good")
        let b = Lab.trust("good", host: "api.good.lab.test")
        let c = Lab.trust("good", host: "www.good.lab.test")
        for trust in [a, b, a, c] { #expect(await evaluator.evaluate(trust).isTrusted) }  // c evicts b, not a
        #expect(counting.count == 3)
        #expect(await evaluator.evaluate(a).isTrusted)
        #expect(counting.count == 3)
        #expect(await evaluator.evaluate(b).isTrusted)
        #expect(counting.count == 4)
        #expect(cache.statistics.entries == 2)
        // Many more distinct names than room: never more than the capacity.
        for index in 0..<50 { _ = await evaluator.evaluate(Lab.trust("good", host: "n\(index).good.lab.test")) }
        #expect(cache.statistics.entries == 2)
    }

    /// The configuration file's off-switch: `false` turns the cache off for a session using it;
    /// an object sets (at most) the capacity and lifetime; bad values are problems with a path.
    @Test func theConfigurationFileCanSwitchTheCacheOff() async throws {
        let off = try TrustConfiguration.parse(#"{"version": 1, "evaluationCache": false}"#, publicSuffixes: nil)
        #expect(off.evaluationCache == nil)
        #expect(try TrustConfiguration.parse(off.jsonText(), publicSuffixes: nil) == off)
        let small = try TrustConfiguration.parse(#"{"version": 1, "evaluationCache": {"capacity": 8, "timeToLiveSeconds": 30}}"#, publicSuffixes: nil)
        #expect(small.evaluationCache == EvaluationCacheSettings(capacity: 8, timeToLive: .seconds(30)))
        #expect(try TrustConfiguration.parse(small.jsonText(), publicSuffixes: nil) == small)
        #expect(try TrustConfiguration.parse(#"{"version": 1}"#, publicSuffixes: nil).evaluationCache == EvaluationCacheSettings())
        for bad in [#""no""#, "0", "null", #"{"capacity": 0}"#, #"{"timeToLiveSeconds": -1}"#, #"{"size": 3}"#] {
            let error = #expect(throws: TrustConfigurationFileError.self, "\(bad)") {
                try TrustConfiguration.parse(#"{"version": 1, "evaluationCache": "# + bad + "}", publicSuffixes: nil)
            }
            #expect(
                error?.problems.isEmpty == false && error?.problems.allSatisfy { $0.path.hasPrefix("$.evaluationCache") } == true,
                "\(bad): \(String(describing: error))")
        }

        var configuration = TrustConfiguration()
        configuration.base.anchors = TrustConfiguration.Anchors(pem: Lab.pki.trustedRoots.map(\.pemString), replaceSystem: true)
        func session(_ configuration: TrustConfiguration) throws -> TrustHTTPClient {
            try labSession(try ConfiguredTrustEvaluator(configuration: configuration))
        }
        let withCache = try session(configuration)
        #expect(withCache.evaluationCache?.capacity == 1024)
        configuration.evaluationCache = EvaluationCacheSettings(capacity: 4, timeToLive: .seconds(600))
        let smaller = try session(configuration)
        #expect(smaller.evaluationCache?.capacity == 4)
        #expect(smaller.evaluationCache?.timeToLive == .seconds(300))  // the session's shorter lifetime wins
        configuration.evaluationCache = nil
        let without = try session(configuration)
        #expect(without.evaluationCache == nil)
        for session in [withCache, smaller, without] { await session.shutdown() }
    }
}

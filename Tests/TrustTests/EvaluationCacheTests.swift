import Foundation
import NIOConcurrencyHelpers
import Testing
import Trust
import TrustHTTP
import TrustLab
import X509

@Suite("Evaluation cache: faster, never a way around verification", .timeLimit(.minutes(3)))
struct EvaluationCacheTests {
    @Test func onlyIdenticalChainNameAndPolicyHit() async throws {
        let cache = TrustEvaluationCache()
        let counting = CountingEvaluator(DefaultTrustEvaluator(anchors: Lab.anchors))
        let evaluator = CachingTrustEvaluator(counting, cache: cache, policyIdentity: "lab")
        #expect(await evaluator.evaluate(Lab.trust("good")).isTrusted)
        #expect(await evaluator.evaluate(Lab.trust("good")).isTrusted)
        #expect(counting.count.withLockedValue { $0 } == 1)
        // Another name for the same chain, another policy, another chain: evaluated.
        #expect(await evaluator.evaluate(Lab.trust("good", host: "api.good.lab.test")).isTrusted)
        #expect(await CachingTrustEvaluator(counting, cache: cache, policyIdentity: "other").evaluate(Lab.trust("good")).isTrusted)
        #expect(await !evaluator.evaluate(Lab.trust("good", host: "evil.lab.test")).isTrusted)
        #expect(counting.count.withLockedValue { $0 } == 4)
        // Refusals are never cached; the append attack is refused every time.
        let pinned = CachingTrustEvaluator(
            CountingEvaluator(try PublicKeysTrustEvaluator(pins: [Lab.pki.intermediate.certificate.spkiPin], anchors: Lab.anchors)),
            cache: cache, policyIdentity: "pinned")
        for _ in 0..<3 { #expect(await !pinned.evaluate(Lab.trust("mitm")).isTrusted) }
        #expect(cache.statistics.entries == 3)
    }

    /// Pitfall 11-style boundary: a cached decision is never used past the earliest notAfter on its path, nor before notBefore.
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
        let counting = CountingEvaluator(DefaultTrustEvaluator(anchors: Lab.anchors))
        let shortLived = CachingTrustEvaluator(counting, cache: TrustEvaluationCache(capacity: 1, timeToLive: .milliseconds(50)), policyIdentity: "lab")
        _ = await shortLived.evaluate(Lab.trust("good"))
        try await Task.sleep(for: .milliseconds(100))
        _ = await shortLived.evaluate(Lab.trust("good"))
        #expect(counting.count.withLockedValue { $0 } == 2)
        _ = await shortLived.evaluate(Lab.trust("ip-only", host: "127.0.0.1"))
        #expect(shortLived.cache.statistics.entries == 1)
    }

    /// With the cache on, every new connection still raises the server-trust challenge, and a
    /// refused chain is refused on every connection.
    @Test func sessionStillAsksOnEveryNewConnection() async throws {
        try await withLabServers(["good", "mitm"], protocols: .http1Only) { servers in
            let challenges = NIOLockedValueBox(0)
            let counting = CountingEvaluator(try PublicKeysTrustEvaluator(pins: [Lab.pki.intermediate.certificate.spkiPin], anchors: Lab.anchors))
            let session = try labSession(.evaluator(counting)) { configuration in
                configuration.challengeHandler = ClosureChallengeHandler { _ in
                    challenges.withLockedValue { $0 += 1 }
                    return .performDefaultHandling
                }
            }
            defer { Task { await session.shutdown() } }
            for _ in 0..<3 {
                #expect(try await session.data(for: Request(url: url(servers["good"]!), headers: [("connection", "close")])).statusCode == 200)
                let error = await sessionError { try await session.data(for: Request(url: url(servers["mitm"]!))) }
                #expect(error?.trustDecision?.reasons.first?.code == "pin-mismatch")
            }
            #expect(challenges.withLockedValue { $0 } == 6)
            #expect(counting.count.withLockedValue { $0 } == 4)  // good once (then cached), mitm three times
            #expect(session.evaluationCache?.statistics.hits == 2)
        }
    }
}

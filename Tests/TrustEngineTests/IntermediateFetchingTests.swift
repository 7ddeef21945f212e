import Foundation
import Testing
import Trust
import TrustLabPKI
import TrustTestSupport
import X509

/// Missing intermediates completed from Authority Information Access (RFC 5280 §4.2.2.1) by the engine, with an
/// in-memory fetcher: what is fetched, when, what is kept, and the bounds. The same rules over real HTTP are in
/// TrustHTTPTests' `IntermediateFetchingSessionTests`.
@Suite("Missing intermediates fetched (AIA)", .timeLimit(.minutes(2)))
struct IntermediateFetchingTests {
    /// Answers by URL, counting the requests; an unknown URL fails, a stalled one waits until cancelled.
    final class Fetcher: IntermediateFetcher, @unchecked Sendable {
        enum Answer: Sendable {
            case bytes([UInt8])
            case stall
            /// Waits 600 s whatever it is told: a fetcher that does not stop when cancelled.
            case deaf
        }

        private let answers: [String: Answer]
        private let lock = NSLock()
        private var requests: [String] = []

        init(_ answers: [String: Answer]) { self.answers = answers }

        var requested: [String] { lock.withLock { requests } }

        struct NotFound: Error, CustomStringConvertible {
            var description: String { "HTTP status 404" }
        }

        func fetch(_ url: URL, maximumSize: Int, deadline: ContinuousClock.Instant) async throws -> [UInt8] {
            lock.withLock { requests.append(url.absoluteString) }
            switch answers[url.absoluteString] {
            case .bytes(let bytes): return bytes
            case .stall:
                try await Task.sleep(for: .seconds(600))
                return []
            case .deaf:
                // Not cancelled with its task: a detached sleep.
                await Task.detached { try? await Task.sleep(for: .seconds(600)) }.value
                return []
            case nil: throw NotFound()
            }
        }
    }

    static let host = "aia.lab.test"
    static let intermediateURL = "http://ca.lab.test/intermediate.der"

    /// A leaf of the lab intermediate naming `caIssuers` as where its issuer is.
    static func leaf(caIssuers: [String] = [intermediateURL], notAfter: Date = Date(timeIntervalSinceNow: 30 * 86_400)) throws -> LabIdentity {
        try Lab.pki.intermediate.leaf(dnsNames: [host], notAfter: notAfter, caIssuers: caIssuers)
    }

    static func trust(_ chain: [Certificate], host: String = host) throws -> ServerTrust {
        try ServerTrust(presentedChain: chain, host: host)
    }

    static func evaluator(_ fetcher: Fetcher, policy: ValidationPolicy = .webPKI, limits: IntermediateFetchingEvaluator.Limits = .init())
        -> IntermediateFetchingEvaluator
    {
        IntermediateFetchingEvaluator(PathValidator(anchors: Lab.anchors, policy: policy), fetcher: fetcher, limits: limits)
    }

    static var intermediateDER: [UInt8] { Lab.pki.intermediate.certificate.derBytes }

    @Test func aMissingIntermediateIsFetchedAsDERAndNamed() async throws {
        let leaf = try Self.leaf()
        // Refused without fetching: the very chain this test completes.
        let alone = await PathValidator(anchors: Lab.anchors).evaluate(try Self.trust([leaf.certificate]))
        #expect(alone.codes == ["no-path-to-trusted-anchor"])
        let fetcher = Fetcher([Self.intermediateURL: .bytes(Self.intermediateDER)])
        let decision = await Self.evaluator(fetcher).evaluate(try Self.trust([leaf.certificate]))
        #expect(decision.isTrusted, "\(decision.reasons) \(decision.notes)")
        #expect(decision.validatedPath == [leaf.certificate, Lab.pki.intermediate.certificate, Lab.pki.root.certificate])
        #expect(decision.presentedChain == [leaf.certificate])
        #expect(fetcher.requested == [Self.intermediateURL])
        #expect(decision.notes.contains { $0.hasPrefix("fetched “") && $0.contains(Self.intermediateURL) && $0.contains("issuer of") }, "\(decision.notes)")
    }

    @Test func aCertsOnlyPKCS7AnswerIsRead() async throws {
        let leaf = try Self.leaf()
        // An unrelated certificate first: only the one that issued the leaf is kept.
        let message = try LabPKCS7.certsOnly([Lab.pki.otherRoot.certificate, Lab.pki.intermediate.certificate])
        let fetcher = Fetcher([Self.intermediateURL: .bytes(message)])
        let decision = await Self.evaluator(fetcher).evaluate(try Self.trust([leaf.certificate]))
        #expect(decision.isTrusted, "\(decision.reasons) \(decision.notes)")
        #expect(decision.validatedPath.count == 3)
    }

    @Test func twoMissingLevelsAreFetchedInTurn() async throws {
        let upperURL = "http://ca.lab.test/upper.der"
        let lowerURL = "http://ca.lab.test/lower.der"
        let upper = try Lab.pki.root.intermediate(commonName: "AIA upper CA")
        let lower = try upper.intermediate(commonName: "AIA lower CA", caIssuers: [upperURL])
        let leaf = try lower.leaf(dnsNames: [Self.host], caIssuers: [lowerURL])
        let fetcher = Fetcher([upperURL: .bytes(upper.certificate.derBytes), lowerURL: .bytes(lower.certificate.derBytes)])
        let decision = await Self.evaluator(fetcher).evaluate(try Self.trust([leaf.certificate]))
        #expect(decision.isTrusted, "\(decision.reasons) \(decision.notes)")
        #expect(decision.validatedPath == [leaf.certificate, lower.certificate, upper.certificate, Lab.pki.root.certificate])
        #expect(fetcher.requested == [lowerURL, upperURL])
        // With one level allowed, the second is not fetched and the chain is refused, saying why.
        var limits = IntermediateFetchingEvaluator.Limits()
        limits.maximumDepth = 1
        let bounded = Fetcher([upperURL: .bytes(upper.certificate.derBytes), lowerURL: .bytes(lower.certificate.derBytes)])
        let refused = await Self.evaluator(bounded, limits: limits).evaluate(try Self.trust([leaf.certificate]))
        #expect(!refused.isTrusted && bounded.requested == [lowerURL])
        #expect(refused.notes.contains { $0.contains("after 1 levels") }, "\(refused.notes)")
    }

    @Test func nothingIsFetchedForACompleteChainOrAnotherRefusal() async throws {
        let leaf = try Self.leaf()
        let fetcher = Fetcher([Self.intermediateURL: .bytes(Self.intermediateDER)])
        let evaluator = Self.evaluator(fetcher)
        // Complete: trusted as presented, directly (inside a handshake) and by evaluation.
        let complete = try Self.trust(leaf.chain)
        #expect(evaluator.decisionWithoutSuspending(complete)?.isTrusted == true)
        #expect(await evaluator.evaluate(complete).isTrusted)
        // Refused for another reason than a missing issuer: a wrong name, an expired leaf.
        let wrongName = await evaluator.evaluate(try Self.trust(leaf.chain, host: "other.lab.test"))
        #expect(wrongName.codes == ["name-mismatch"])
        let expired = try Self.leaf(notAfter: Date(timeIntervalSinceNow: -3_600))
        #expect(await evaluator.evaluate(try Self.trust(expired.chain)).codes.contains("expired"))
        #expect(fetcher.requested.isEmpty)
        // Incomplete too, and refused for the leaf itself (a wrong name, an expired leaf): no issuer changes that, so
        // no CA's server hears of the connection.
        let incompleteWrongName = await evaluator.evaluate(try Self.trust([leaf.certificate], host: "other.lab.test"))
        #expect(incompleteWrongName.codes.contains("name-mismatch"), "\(incompleteWrongName.codes)")
        #expect(await !evaluator.evaluate(try Self.trust([expired.certificate])).isTrusted)
        #expect(fetcher.requested.isEmpty, "\(fetcher.requested)")
        // An incomplete chain has no direct answer: the handshake goes to the evaluation that fetches.
        #expect(evaluator.decisionWithoutSuspending(try Self.trust([leaf.certificate])) == nil)
    }

    @Test(arguments: ["https://ca.lab.test/i.der", "ldap://ca.lab.test/cn=CA?cACertificate", "file:///etc/ssl/ca.der", "ftp://ca.lab.test/i.der"])
    func otherSchemesAreNeverFetched(_ location: String) async throws {
        let leaf = try Self.leaf(caIssuers: [location])
        let fetcher = Fetcher([location: .bytes(Self.intermediateDER)])
        let decision = await Self.evaluator(fetcher).evaluate(try Self.trust([leaf.certificate]))
        #expect(!decision.isTrusted && fetcher.requested.isEmpty)
        #expect(decision.notes.contains { $0.contains(location) && $0.contains("only http locations are fetched") }, "\(decision.notes)")
    }

    @Test func anUnrelatedCertificateIsNotUsed() async throws {
        let leaf = try Self.leaf()
        // Another CA's certificate, and one with the intermediate's name but another key: neither issued the leaf.
        let impostor = try Lab.pki.otherRoot.intermediate(commonName: "Lab Intermediate CA")
        for served in [Lab.pki.otherRoot.certificate, impostor.certificate] {
            let fetcher = Fetcher([Self.intermediateURL: .bytes(served.derBytes)])
            let decision = await Self.evaluator(fetcher).evaluate(try Self.trust([leaf.certificate]))
            #expect(decision.codes == ["no-path-to-trusted-anchor"], "\(decision.reasons)")
            #expect(decision.notes.contains { $0.contains("gave no issuer") }, "\(decision.notes)")
            #expect(!decision.validatedPath.contains(served))
        }
    }

    @Test func aFetchedRootIsNeverAnAnchor() async throws {
        // The leaf's issuer location serves a root of its own making: it links, but nothing trusts it.
        let rogue = try LabAuthority.root(commonName: "AIA rogue root")
        let leaf = try rogue.leaf(dnsNames: [Self.host], caIssuers: [Self.intermediateURL])
        let fetcher = Fetcher([Self.intermediateURL: .bytes(rogue.certificate.derBytes)])
        let decision = await Self.evaluator(fetcher).evaluate(try Self.trust([leaf.certificate]))
        #expect(!decision.isTrusted && decision.codes == ["no-path-to-trusted-anchor"], "\(decision.reasons)")
        #expect(fetcher.requested == [Self.intermediateURL])
    }

    @Test func aLoopOfLocationsEnds() async throws {
        // An intermediate under an untrusted root whose issuer location is its own: fetched once, never again.
        let selfURL = "http://ca.lab.test/loop.der"
        let looping = try Lab.pki.untrustedRoot.intermediate(commonName: "AIA looping CA", caIssuers: [selfURL])
        let leaf = try looping.leaf(dnsNames: [Self.host], caIssuers: [selfURL])
        let fetcher = Fetcher([selfURL: .bytes(looping.certificate.derBytes)])
        let decision = await Self.evaluator(fetcher).evaluate(try Self.trust([leaf.certificate]))
        #expect(!decision.isTrusted && fetcher.requested == [selfURL])
        #expect(decision.notes.contains { $0.contains("a loop of issuers") }, "\(decision.notes)")
    }

    @Test func fetchesAreBoundedInNumber() async throws {
        let urls = (1...6).map { "http://ca.lab.test/missing-\($0).der" }
        let leaf = try Self.leaf(caIssuers: urls)
        let fetcher = Fetcher([:])
        let decision = await Self.evaluator(fetcher).evaluate(try Self.trust([leaf.certificate]))
        #expect(!decision.isTrusted && fetcher.requested == Array(urls.prefix(4)))
        #expect(decision.notes.contains { $0.contains("after 4 fetches") }, "\(decision.notes)")
        #expect(decision.notes.contains { $0.contains("HTTP status 404") })
    }

    @Test func aStalledLocationEndsWithinTheBudget() async throws {
        let leaf = try Self.leaf()
        var limits = IntermediateFetchingEvaluator.Limits()
        limits.budget = .milliseconds(300)
        let fetcher = Fetcher([Self.intermediateURL: .stall])
        let clock = ContinuousClock()
        let started = clock.now
        let decision = await Self.evaluator(fetcher, limits: limits).evaluate(try Self.trust([leaf.certificate]))
        // Ends (the 600 s stall is cancelled); how fast is the benchmark's, not this test's.
        #expect(started.duration(to: clock.now) < .seconds(60))
        #expect(!decision.isTrusted)
        #expect(decision.notes.contains { $0.contains("no answer within the budget") }, "\(decision.notes)")
    }

    @Test func theHandshakesDeadlineEndsTheFetchesBeforeTheBudget() async throws {
        let leaf = try Self.leaf()
        var limits = IntermediateFetchingEvaluator.Limits()
        limits.budget = .seconds(600)
        let fetcher = Fetcher([Self.intermediateURL: .stall])
        let evaluator = Self.evaluator(fetcher, limits: limits)
        let trust = try Self.trust([leaf.certificate])
        let decision = await IntermediateFetchingEvaluator.$deadline.withValue(.now + .milliseconds(300)) { await evaluator.evaluate(trust) }
        #expect(!decision.isTrusted && fetcher.requested == [Self.intermediateURL])
        #expect(decision.notes.contains { $0.contains("no answer within the handshake's deadline") }, "\(decision.notes)")
        // A deadline already passed: nothing is fetched.
        let late = await IntermediateFetchingEvaluator.$deadline.withValue(.now - .seconds(1)) { await evaluator.evaluate(trust) }
        #expect(late.notes.contains { $0.contains("the handshake's deadline had passed") }, "\(late.notes)")
        #expect(fetcher.requested == [Self.intermediateURL])
    }

    @Test func aFetcherThatIgnoresCancellationDoesNotHoldTheEvaluation() async throws {
        let leaf = try Self.leaf()
        var limits = IntermediateFetchingEvaluator.Limits()
        limits.budget = .milliseconds(300)
        let fetcher = Fetcher([Self.intermediateURL: .deaf])
        let clock = ContinuousClock()
        let started = clock.now
        let decision = await Self.evaluator(fetcher, limits: limits).evaluate(try Self.trust([leaf.certificate]))
        // The fetcher sleeps 600 s whatever it is told; the evaluation ends with the budget (a bound far from both).
        #expect(started.duration(to: clock.now) < .seconds(300))
        #expect(decision.notes.contains { $0.contains("no answer within the budget") }, "\(decision.notes)")
        // Cancelling the evaluation's task ends it too.
        var patient = IntermediateFetchingEvaluator.Limits()
        patient.budget = .seconds(600)
        let evaluator = Self.evaluator(fetcher, limits: patient)
        let trust = try Self.trust([leaf.certificate])
        let task = Task { await evaluator.evaluate(trust) }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        let cancelled = await task.value
        #expect(!cancelled.isTrusted && started.duration(to: clock.now) < .seconds(300))
        #expect(cancelled.notes.contains { $0.contains("could not fetch the issuer") }, "\(cancelled.notes)")
    }

    @Test func malformedAnswersAreNamed() async throws {
        let leaf = try Self.leaf()
        for body in [[UInt8](), Array("<html>moved</html>".utf8), [0x30, 0x82, 0xFF, 0xFF, 0x01]] {
            let fetcher = Fetcher([Self.intermediateURL: .bytes(body)])
            let decision = await Self.evaluator(fetcher).evaluate(try Self.trust([leaf.certificate]))
            #expect(!decision.isTrusted)
            #expect(decision.notes.contains { $0.contains("could not fetch the issuer") }, "\(decision.notes)")
        }
    }

    @Test func pinsAreJudgedOnTheCompletedPath() async throws {
        let leaf = try Self.leaf()
        // The fetched intermediate's key pinned: trusted on the completed path.
        var pinned = ValidationPolicy.webPKI
        pinned.pins = [Lab.pki.intermediate.certificate.spkiPin]
        let fetcher = Fetcher([Self.intermediateURL: .bytes(Self.intermediateDER)])
        #expect(await Self.evaluator(fetcher, policy: pinned).evaluate(try Self.trust([leaf.certificate])).isTrusted)
        // A key on no certificate of the path: refused once the path is complete, for the pin.
        var other = ValidationPolicy.webPKI
        other.pins = [Lab.pki.otherRoot.certificate.spkiPin]
        let refused = await Self.evaluator(fetcher, policy: other).evaluate(try Self.trust([leaf.certificate]))
        #expect(!refused.isTrusted && refused.codes.contains("pin-mismatch"), "\(refused.codes)")
    }

    @Test func aSecurityPolicyUsesFetchedIntermediates() async throws {
        let leaf = try Self.leaf()
        var policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [Lab.pki.intermediate.certificate])
        policy.systemAnchors = Lab.anchors
        let fetcher = Fetcher([Self.intermediateURL: .bytes(Self.intermediateDER)])
        let evaluator = IntermediateFetchingEvaluator(policy, fetcher: fetcher)
        #expect(await evaluator.evaluate(try Self.trust([leaf.certificate])).isTrusted)
    }

    @Test func theEvaluationCacheTellsFetchedIntermediatesApart() async throws {
        let leaf = try Self.leaf()
        let cache = TrustEvaluationCache()
        var completed = try Self.trust([leaf.certificate])
        completed.fetchedIntermediates = [Lab.pki.intermediate.certificate]
        let decision = await PathValidator(anchors: Lab.anchors).evaluate(completed)
        #expect(decision.isTrusted)
        cache.store(decision, for: completed, policy: "p")
        #expect(cache.decision(for: completed, policy: "p") != nil)
        #expect(cache.decision(for: try Self.trust([leaf.certificate]), policy: "p") == nil)
    }
}

import Testing
import Trust
import TrustTestSupport

/// `PerHostTrustEvaluator`: the evaluator of the chain's name decides, names compared canonically; a chain with no
/// name, or another name, goes to `otherHosts`; a decision without suspending comes from the chosen evaluator alone.
@Suite("Per-host evaluators: the name the chain must be valid for chooses")
struct PerHostTrustEvaluatorTests {
    /// Refuses every lab chain: a pin no lab certificate has.
    static func refusing() throws -> PublicKeysTrustEvaluator {
        try PublicKeysTrustEvaluator(pins: [SPKIPin(digest: [UInt8](repeating: 7, count: 32))], anchors: Lab.anchors)
    }

    @Test func theHostsEvaluatorDecidesWhateverTheKeysCase() async throws {
        let host = Lab.trust("good").peerName?.description ?? ""
        let written = host.uppercased() + "."
        let evaluator = PerHostTrustEvaluator([written: DefaultTrustEvaluator(anchors: Lab.anchors)], otherHosts: try Self.refusing())
        #expect(await evaluator.evaluate(Lab.trust("good")).isTrusted, "\(written) is \(host)")
        #expect(await evaluator.evaluate(Lab.trust("good", host: host.uppercased())).isTrusted)

        // No name: the other hosts' evaluator (here refusing on its pin, not on the name).
        let nameless = ServerTrust(presentedChain: Lab.chain("good"), peerName: nil)
        let namelessCodes = await evaluator.evaluate(nameless).codes
        #expect(namelessCodes.contains("pin-mismatch"), "\(namelessCodes)")
        // Another name: the other hosts' too.
        let swapped = PerHostTrustEvaluator(["elsewhere.lab.test": DefaultTrustEvaluator(anchors: Lab.anchors)], otherHosts: try Self.refusing())
        #expect(await swapped.evaluate(Lab.trust("good")).codes == ["pin-mismatch"])
    }

    /// Immediate answers come from the chosen evaluator when it has them, and only then.
    @Test func immediateDecisionsAreTheChosenEvaluators() async throws {
        let composite = try CompositeTrustEvaluator([DefaultTrustEvaluator(anchors: Lab.anchors)])
        let host = Lab.trust("good").peerName?.description ?? ""
        let direct = PerHostTrustEvaluator([host: DefaultTrustEvaluator(anchors: Lab.anchors)], otherHosts: composite)
        #expect(direct.decisionWithoutSuspending(Lab.trust("good"))?.isTrusted == true)
        #expect(await direct.evaluate(afterImmediateMiss: Lab.trust("good")).isTrusted)
        // The other hosts' evaluator (a composite) decides only by evaluating.
        let nameless = ServerTrust(presentedChain: Lab.chain("good"), peerName: nil)
        #expect(direct.decisionWithoutSuspending(nameless) == nil)
        let expected = await composite.evaluate(nameless)
        #expect(await direct.evaluate(afterImmediateMiss: nameless).codes == expected.codes)
    }
}

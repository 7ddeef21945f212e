import Foundation
import Testing
import TrustLabPKI
import X509

@testable import Trust

/// A decision's members, its replacements (``TrustDecision/overridden(by:isTrusted:reasons:notes:policy:)``, a
/// cached decision ``TrustDecision/reused(at:)``) and its size.
@Suite struct TrustDecisionTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func trusted() throws -> TrustDecision {
        let pki = try LabPKI.make(now: start)
        let path = pki.presentedChains["good"] ?? []
        return TrustDecision(
            isTrusted: true, reasons: [], notes: ["a note"], presentedChain: path, validatedPath: path + [pki.root.certificate],
            peerName: nil, evaluationTime: start, policy: .publicKeyPins(pins: 2), expectedPins: [pki.intermediate.certificate.spkiPin],
            validity: start...start.addingTimeInterval(3600), allowedFailures: [.nameMismatch(expected: "a.test", presented: ["b.test"])])
    }

    @Test func aReusedDecisionIsTheSameJudgementAtAnotherTime() throws {
        let decision = try Self.trusted()
        let later = Self.start.addingTimeInterval(60)
        let reused = decision.reused(at: later)
        #expect(reused.evaluationTime == later)
        #expect(decision.evaluationTime == Self.start)
        #expect(reused.isTrusted && reused.reasons.isEmpty && reused.notes == ["a note"])
        #expect(reused.presentedChain == decision.presentedChain && reused.validatedPath == decision.validatedPath)
        #expect(reused.validatedPath.count == 3)
        #expect(reused.policy == .publicKeyPins(pins: 2) && reused.expectedPins == decision.expectedPins)
        #expect(reused.validity == decision.validity && reused.allowedFailures.count == 1 && reused.override == nil)
    }

    @Test func anOverrideIsANewDecisionThatKeepsTheOneItReplaced() throws {
        let decision = try Self.trusted()
        let refused = decision.overridden(
            by: .challengeHandler, isTrusted: false, reasons: [.nameMismatch(expected: "a.test", presented: [])], notes: ["refused"],
            policy: .challengeHandler(acceptedWithCredential: false))
        #expect(!refused.isTrusted && refused.reasons.count == 1 && refused.notes == ["refused"])
        // A refusal has no validated path: the path that validated is its closest path.
        #expect(refused.validatedPath.isEmpty && refused.closestPath == decision.validatedPath)
        #expect(refused.policy == .challengeHandler(acceptedWithCredential: false))
        #expect(refused.override?.origin == .challengeHandler)
        #expect(refused.override?.replaced.isTrusted == true && refused.override?.replaced.validatedPath.count == 3)
        #expect(refused.evaluatorDecision.isTrusted && refused.evaluatorDecision.override == nil)
        // The replaced decision is unchanged, and the override's own reuse keeps what it replaced.
        #expect(decision.isTrusted && decision.override == nil)
        let reused = refused.reused(at: Self.start.addingTimeInterval(1))
        #expect(reused.override?.origin == .challengeHandler && !reused.isTrusted)
    }

    /// A decision is one reference to its shared parts and its time: the responses, errors and async frames that
    /// hold one stay small (a waiting request's frames hold responses; "Frame sizes" in TrustHTTP's "How a request
    /// flows" article).
    @Test func aDecisionIsOneReferenceAndItsTime() {
        #expect(MemoryLayout<TrustDecision>.size == MemoryLayout<Int>.size + MemoryLayout<Date>.size)
    }
}

import Foundation
import FuzzSupport
import X509

// PresentedChainInput is package-internal to swift-trust; run.sh builds with -enable-testing.
@testable import Trust

/// The anchors: the PEM file named by `TRUST_FUZZ_ANCHORS` (run.sh passes the lab PKI's `roots.pem`,
/// so the lab chains in the seed corpus validate), or none.
let anchors: [Certificate] = {
    guard let path = ProcessInfo.processInfo.environment["TRUST_FUZZ_ANCHORS"] else { return [] }
    do {
        return try CertificateSource.certificates(atPath: path)
    } catch {
        fatalError("TRUST_FUZZ_ANCHORS: \(error)")
    }
}()

/// A small budget keeps each evaluation fast; a chain needing more is refused as too costly.
let validator: PathValidator = {
    var policy = ValidationPolicy.webPKI
    policy.maximumSignatureChecks = 16
    return PathValidator(anchors: .only(anchors), policy: policy, name: "fuzz")
}()

/// Fixed for the run, so a chain's verdict does not change under it; `TRUST_FUZZ_TIME` (seconds
/// since 1970, printed below) replays a saved input at the instant it was found.
let evaluationTime = fixedEvaluationTime(target: "FuzzEvaluateChainInput")
let peerName: PeerName? = try? PeerName(host: "good.lab.test")

/// `trust evaluate --chain`: the chain file (PEM bundle or DER) read by `PresentedChainInput`, then
/// evaluated against a fixed anchor set with a small work budget.
///
/// Properties, besides "no crash, no leak": an unreadable input is a `CertificateLoadingError`
/// naming the source; a chain whose leaf cannot be processed is refused with reasons and nothing
/// presented; otherwise the decision is trusted with no reasons and a validated path from the leaf
/// to an anchor, or not trusted with at least one reason and no validated path.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    test(fuzzInput(start, count))
}

/// The entry point (SwiftPM links this target with `--defsym main=FuzzEvaluateChainInput_main`): libFuzzer's driver.
@_cdecl("FuzzEvaluateChainInput_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in test(fuzzInput(data, count)) }
}

/// One input: every property must hold.
func test(_ bytes: [UInt8]) -> CInt {
    let input: PresentedChainInput
    do {
        input = try PresentedChainInput(bytes: bytes, source: "<fuzz>")
    } catch {
        require(error.source == "<fuzz>", "the error names \(error.source), not the source")
        return 0
    }
    if let refusal = input.refusal(peerName: peerName) {
        require(!refusal.isTrusted && !refusal.reasons.isEmpty, "an unprocessable leaf refused without a reason")
        require(input.certificates.isEmpty && refusal.presentedChain.isEmpty, "an unprocessable leaf, yet certificates presented")
        return 0
    }
    require(!input.certificates.isEmpty, "a readable chain without certificates")
    let trust = ServerTrust(presentedChain: input.certificates, peerName: peerName, evaluationTime: evaluationTime)
    let decision = runBlocking { await validator.evaluate(trust) }
    if decision.isTrusted {
        require(decision.reasons.isEmpty, "trusted, with reasons: \(decision.reasons)")
        require(decision.validatedPath.first == input.certificates.first, "the validated path does not start at the leaf")
        require(decision.validatedPath.last.map { anchors.contains($0) } == true, "the validated path does not end at an anchor")
    } else {
        require(!decision.reasons.isEmpty, "not trusted, without a reason")
        require(decision.validatedPath.isEmpty, "not trusted, with a validated path")
    }
    return 0
}

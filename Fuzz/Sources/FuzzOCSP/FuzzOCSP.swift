import Foundation
import FuzzLab
import FuzzSupport
import X509

@testable import Trust

/// The lab's anchors and `good` chain (see `labGoodChain`).
let lab = labGoodChain

/// Fixed for the run; `TRUST_FUZZ_TIME` (seconds since 1970, printed below) replays an input at the instant it was found.
let evaluationTime = fixedEvaluationTime(target: "FuzzOCSP")

/// OCSP parsing (`OCSPResponse(derEncoded:)`, `OCSPRequest(derEncoded:)`) and hard leaf revocation checking of the
/// lab's `good` chain with a parsed response kept for its leaf.
///
/// Properties, besides "no crash, no leak": a failure is an `OCSPParseError` with a detail; a parsed request encodes
/// to bytes that parse to the same request; the decision is trusted only when the response's verdict for the leaf is
/// good, and refused as `revoked` only when it is revoked; a verdict other than unknown needs a successful response
/// with a status for the leaf.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    test(fuzzInput(start, count))
}

/// The entry point (SwiftPM links this target with `--defsym main=FuzzOCSP_main`): libFuzzer's driver.
@_cdecl("FuzzOCSP_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in test(fuzzInput(data, count)) }
}

/// One input: every property must hold.
func test(_ bytes: [UInt8]) -> CInt {
    do {
        let request = try OCSPRequest(derEncoded: bytes)
        let again = try OCSPRequest(derEncoded: request.derBytes())
        require(again == request, "a parsed request does not encode to itself")
    } catch let error as OCSPParseError {
        require(!error.detail.isEmpty, "a request parse error without a detail")
    } catch {
        fatalError("property violated: a request failed to encode: \(error)")
    }
    let response: OCSPResponse
    do {
        response = try OCSPResponse(derEncoded: bytes)
    } catch {
        require(!error.detail.isEmpty, "a parse error without a detail")
        return 0
    }
    require(response.derBytes == bytes, "a parsed response does not keep its bytes")
    guard lab.chain.count >= 2 else { return 0 }
    let leaf = lab.chain[0]
    let issuer = lab.chain[1]
    let verdict = response.verdict(for: leaf, issuer: issuer, at: evaluationTime)
    if case .unknown = verdict {
    } else {
        require(response.status == .successful && response.singleResponse(for: leaf, issuer: issuer) != nil, "a verdict without a status for the leaf")
    }
    let cache = OCSPCache()
    cache.store(OCSPCache.Entry(response: response), for: leaf)
    var policy = ValidationPolicy.webPKI
    policy.revocation = RevocationPolicy(mode: .hard, ocspCache: cache)
    let validator = PathValidator(anchors: .only(lab.anchors), policy: policy, name: "fuzz")
    let trust = ServerTrust(presentedChain: lab.chain, peerName: try? PeerName(host: "good.lab.test"), evaluationTime: evaluationTime)
    let decision = runBlocking { await validator.evaluate(trust) }
    let codes = decision.reasons.map(\.code)
    switch verdict {
    case .good:
        require(decision.isTrusted || !codes.contains("revoked"), "a good verdict, yet revoked")
    case .revoked:
        require(!decision.isTrusted && codes.contains("revoked"), "a revoked verdict, yet not refused as revoked: \(codes)")
    case .unknown:
        require(!decision.isTrusted, "trusted under hard checking without a usable response")
    }
    return 0
}

import Foundation
import FuzzLab
import FuzzSupport
import X509

// `@testable`: a reason's detail (which certificate was revoked) is the package's, not public API.
@testable import Trust

/// The lab's anchors and `good` chain (see `labGoodChain`).
let lab = labGoodChain

/// Fixed for the run; `TRUST_FUZZ_TIME` (seconds since 1970, printed below) replays an input at the instant it was found.
let evaluationTime = fixedEvaluationTime(target: "FuzzCRL")

/// CRL parsing (`CertificateRevocationList.parseAll`, PEM or DER) and hard, whole-chain revocation checking of the
/// lab's `good` chain with what parses.
///
/// Properties, besides "no crash, no leak": a failure is a `ParseError` with a detail; a parsed CRL parses again from
/// its own DER to an equal value; the decision is trusted with no reasons (and then every certificate but the anchor
/// has a CRL from its issuer's name among the input) or refused with at least one; a `revoked` reason names a
/// certificate that a parsed CRL lists.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    test(fuzzInput(start, count))
}

/// The entry point (SwiftPM links this target with `--defsym main=FuzzCRL_main`): libFuzzer's driver.
@_cdecl("FuzzCRL_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in test(fuzzInput(data, count)) }
}

/// One input: every property must hold.
func test(_ bytes: [UInt8]) -> CInt {
    let crls: [CertificateRevocationList]
    do {
        crls = try CertificateRevocationList.parseAll(bytes)
    } catch {
        require(!error.detail.isEmpty, "a parse error without a detail")
        return 0
    }
    for crl in crls {
        require((try? CertificateRevocationList(derEncoded: crl.derBytes)) == crl, "a parsed CRL does not parse again to itself")
        _ = crl.description
    }
    guard !lab.chain.isEmpty else { return 0 }
    var policy = ValidationPolicy.webPKI
    policy.revocation = RevocationPolicy(mode: .hard, depth: .chain, crls: crls)
    let validator = PathValidator(anchors: .only(lab.anchors), policy: policy, name: "fuzz")
    let trust = ServerTrust(presentedChain: lab.chain, peerName: try? PeerName(host: "good.lab.test"), evaluationTime: evaluationTime)
    let decision = runBlocking { await validator.evaluate(trust) }
    if decision.isTrusted {
        require(decision.reasons.isEmpty, "trusted, with reasons: \(decision.reasons)")
        let path = decision.validatedPath
        for (index, certificate) in path.enumerated() where index + 1 < path.count {
            require(crls.contains { $0.issuer == certificate.issuer }, "trusted under hard checking without a CRL from \(certificate.issuer)")
            // A CRL that nothing keeps from being used (well-formed, current, unscoped, signed by the issuer on the path) and
            // that lists the certificate makes it revoked.
            let revoking = crls.contains { crl in
                crl.issuer == certificate.issuer && crl.unusableReasons.isEmpty && crl.issuingDistributionPoint == nil
                    && crl.thisUpdate <= evaluationTime && (crl.nextUpdate ?? .distantPast) >= evaluationTime
                    && crl.entry(for: certificate).map { $0.reason != .removeFromCRL } == true && crl.isSigned(by: path[index + 1].publicKey)
            }
            require(!revoking, "trusted although a usable CRL lists \(certificate.subject)")
        }
    } else {
        require(!decision.reasons.isEmpty, "not trusted, without a reason")
        for reason in decision.reasons {
            guard case .revoked(let subject, _, _, _, _) = reason.detail else { continue }
            let named = lab.chain.filter { $0.subject.description == subject }
            require(named.contains { certificate in crls.contains { $0.entry(for: certificate) != nil } }, "revoked, yet no CRL lists \(subject)")
        }
    }
    return 0
}

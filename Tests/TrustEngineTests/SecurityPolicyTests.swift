import Foundation
import Testing
import Trust
import TrustLabPKI
import TrustTestSupport
import X509

@Suite("SecurityPolicy: AFNetworking semantics, safely", .paced)
struct SecurityPolicyTests {
    func policy(_ mode: PinningMode, pinned: [Certificate] = [], allowInvalid: Bool = false, validatesDomainName: Bool = true) -> SecurityPolicy {
        SecurityPolicy(
            pinningMode: mode, pinnedCertificates: pinned, allowInvalidCertificates: allowInvalid, validatesDomainName: validatesDomainName,
            systemAnchors: Lab.anchors)
    }

    @Test func defaultPolicyMatchesAFNetworkingDefaults() {
        let policy = SecurityPolicy.default
        #expect(policy.pinningMode == .none)
        #expect(!policy.allowInvalidCertificates)
        #expect(policy.validatesDomainName)
        #expect(policy.pinnedCertificates.isEmpty)
    }

    /// The default policy validates (AFNetworking 2.5.1 returned YES in mode none).
    @Test func defaultPolicyRefusesSelfSignedAndUntrustedRoots() async {
        for server in ["self-signed", "untrusted-root", "expired"] {
            #expect(await !policy(.none).evaluate(Lab.chain(server), forDomain: LabPKI.hostName(for: server)).isTrusted, "\(server)")
        }
        #expect(await policy(.none).evaluate(Lab.chain("good"), forDomain: "good.lab.test").isTrusted)
    }

    /// A valid certificate for another name fails in every mode that validates names.
    @Test func wrongHostFailsInEveryMode() async {
        let pinned = [Lab.pki.intermediate.certificate]
        for mode in PinningMode.allCases {
            let decision = await policy(mode, pinned: pinned).evaluate(Lab.chain("wrong-host"), forDomain: "wrong-host.lab.test")
            #expect(!decision.isTrusted, "\(mode)")
        }
        // validatesDomainName = NO is AFNetworking's explicit opt-out.
        #expect(await policy(.none, validatesDomainName: false).evaluate(Lab.chain("wrong-host"), forDomain: "wrong-host.lab.test").isTrusted)
    }

    @Test func invalidCertificateCannotBeValidatedForADomainWithoutPinning() async {
        let decision = await policy(.none, allowInvalid: true).evaluate(Lab.chain("self-signed"), forDomain: "self-signed.lab.test")
        #expect(decision.codes == ["pinning-required"])
        // Without a domain, allowInvalidCertificates accepts it (AFNetworking), saying so in the notes.
        let anything = await policy(.none, allowInvalid: true).evaluate(Lab.chain("self-signed"), forDomain: nil)
        #expect(anything.isTrusted)
        #expect(anything.notes.first?.contains("without validation") == true)
    }

    @Test func certificateModeMakesPinnedCertificatesTheOnlyAnchors() async {
        let selfSignedLeaf = Lab.chain("self-signed")[0]
        // AFNetworking: without allowInvalidCertificates the chain must first be valid against the system anchors.
        #expect(await !policy(.certificate, pinned: [selfSignedLeaf]).evaluate(Lab.chain("self-signed"), forDomain: "self-signed.lab.test").isTrusted)
        #expect(
            await policy(.certificate, pinned: [selfSignedLeaf], allowInvalid: true).evaluate(Lab.chain("self-signed"), forDomain: "self-signed.lab.test")
                .isTrusted)
        // A chain from another trusted CA does not reach the pinned intermediate.
        #expect(await !policy(.certificate, pinned: [Lab.pki.intermediate.certificate]).evaluate(Lab.chain("mitm"), forDomain: "good.lab.test").isTrusted)
        #expect(await policy(.certificate, pinned: [Lab.pki.intermediate.certificate]).evaluate(Lab.chain("good"), forDomain: "good.lab.test").isTrusted)
    }

    /// AFNetworking's public-key mode with allowInvalidCertificates accepts any chain that merely
    /// *contains* a pinned key. Here the leaf must chain to the pinned key by signatures.
    @Test func allowInvalidWithPublicKeyPinningStillNeedsAPathToThePin() async throws {
        let pinnedIntermediate = Lab.pki.intermediate.certificate
        let attacker = try LabAuthority.selfSignedLeaf(dnsNames: ["good.lab.test"])
        let attack = [attacker.certificate, pinnedIntermediate]
        let decision = await policy(.publicKey, pinned: [pinnedIntermediate], allowInvalid: true).evaluate(attack, forDomain: "good.lab.test")
        #expect(!decision.isTrusted)
        // The genuine chain passes, even expired (that is what allowInvalidCertificates means).
        #expect(await policy(.publicKey, pinned: [pinnedIntermediate], allowInvalid: true).evaluate(Lab.chain("good"), forDomain: "good.lab.test").isTrusted)
        #expect(
            await policy(.publicKey, pinned: [pinnedIntermediate], allowInvalid: true).evaluate(Lab.chain("expired"), forDomain: "expired.lab.test").isTrusted)
        // Without allowInvalidCertificates the pin is checked on the validated path only.
        #expect(await !policy(.publicKey, pinned: [pinnedIntermediate]).evaluate(Lab.chain("mitm"), forDomain: "good.lab.test").isTrusted)
        #expect(await !policy(.publicKey, pinned: [pinnedIntermediate]).evaluate(Lab.chain("expired"), forDomain: "expired.lab.test").isTrusted)
    }

    @Test func pinningModesWithNoPinnedCertificatesTrustNothing() async {
        for mode in [PinningMode.publicKey, .certificate] {
            #expect(await policy(mode).evaluate(Lab.chain("good"), forDomain: "good.lab.test").codes == ["pinning-required"])
        }
    }

    /// AFNetworking's NSSecureCoding / NSCopying: a value that round-trips through Codable.
    @Test func policyRoundTripsThroughCodableWithEveryFlag() throws {
        for allow in [true, false] {
            for validates in [true, false] {
                for mode in PinningMode.allCases {
                    let original = SecurityPolicy(
                        pinningMode: mode, pinnedCertificates: [Lab.pki.root.certificate], allowInvalidCertificates: allow, validatesDomainName: validates)
                    let decoded = try JSONDecoder().decode(SecurityPolicy.self, from: JSONEncoder().encode(original))
                    #expect(decoded == original)
                }
            }
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(
                SecurityPolicy.self,
                from: Data(#"{"pinningMode":"none","pinnedCertificates":["AAAA"],"allowInvalidCertificates":false,"validatesDomainName":true}"#.utf8))
        }
    }
}

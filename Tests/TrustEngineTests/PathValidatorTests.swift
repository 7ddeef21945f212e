import Foundation
import Testing
import Trust
import TrustLabPKI
import TrustTestSupport
import X509

@Suite("PathValidator: default Web-PKI evaluation", .paced)
struct PathValidatorTests {
    @Test func goodChainIsTrustedWithItsValidatedPath() async {
        let decision = await Lab.evaluate("good")
        #expect(decision.isTrusted, "\(decision.reasons)")
        #expect(
            decision.validatedPath.map(\.subject) == [Lab.chain("good")[0].subject, Lab.pki.intermediate.certificate.subject, Lab.pki.root.certificate.subject])
    }

    @Test func wildcardAndIPNamesMatch() async {
        #expect(await Lab.evaluate("good", host: "api.good.lab.test").isTrusted)
        #expect(await Lab.evaluate("good", host: "GOOD.LAB.TEST.").isTrusted)
        #expect(await Lab.evaluate("good", host: "127.0.0.1").isTrusted)
        #expect(await Lab.evaluate("ip-only", host: "::1").isTrusted)
        // A wildcard covers exactly one label.
        #expect(await !Lab.evaluate("good", host: "a.b.good.lab.test").isTrusted)
    }

    @Test func expiredAndNotYetValidAreNamed() async {
        let expired = await Lab.evaluate("expired")
        #expect(!expired.isTrusted)
        #expect(expired.codes == ["expired"])
        let early = await Lab.evaluate("not-yet-valid")
        #expect(early.codes == ["not-yet-valid"])
    }

    @Test func validityIsJudgedAtTheEncodedSecondNeverRoundedUp() async throws {
        let leaf = Lab.chain("good")[0]
        let validator = PathValidator(anchors: Lab.anchors)
        func trusted(at time: Date) async throws -> Bool {
            await validator.evaluate(try ServerTrust(presentedChain: Lab.chain("good"), host: "good.lab.test", evaluationTime: time)).isTrusted
        }
        #expect(try await !trusted(at: leaf.notValidBefore.addingTimeInterval(-0.001)))
        #expect(try await trusted(at: leaf.notValidBefore))
        #expect(try await trusted(at: leaf.notValidAfter.addingTimeInterval(0.999)))
        #expect(try await !trusted(at: leaf.notValidAfter.addingTimeInterval(1)))
    }

    /// A valid certificate for another name fails, and the error names what it holds.
    @Test func wrongHostIsRefusedAndTheHeldNamesAreListed() async {
        let decision = await Lab.evaluate("wrong-host", host: "wrong-host.lab.test")
        #expect(decision.reasons == [.nameMismatch(expected: "wrong-host.lab.test", presented: ["other.lab.test"])])
    }

    /// The default policy refuses self-signed and untrusted-root chains.
    @Test func selfSignedAndUntrustedRootAreRefusedWithTheirReason() async {
        let selfSigned = await Lab.evaluate("self-signed")
        #expect(!selfSigned.isTrusted)
        guard case .noPathToTrustedAnchor(.selfSignedLeaf)? = selfSigned.reasons.first?.detail else {
            Issue.record("expected selfSignedLeaf, got \(selfSigned.reasons)")
            return
        }
        let untrusted = await Lab.evaluate("untrusted-root")
        #expect(!untrusted.isTrusted)
        #expect(
            untrusted.reasons.contains {
                if case .noPathToTrustedAnchor(.missingIssuer) = $0.detail { return true }
                return false
            })
    }

    @Test func incompleteChainNamesTheMissingIssuer() async {
        let decision = await Lab.evaluate("incomplete-chain")
        #expect(
            decision.reasons == [
                .noPathToTrustedAnchor(
                    .missingIssuer(issuer: Lab.pki.intermediate.certificate.subject.description, of: Lab.chain("good")[0].subject.description))
            ])
    }

    @Test func subjectCommonNameIsNeverUsedAsAName() async {
        let decision = await Lab.evaluate("no-san", host: "no-san.lab.test")
        #expect(decision.codes == ["missing-subject-alt-name"])
    }

    @Test func clientOnlyCertificateIsNotAServerCertificate() async {
        #expect(await Lab.evaluate("client-auth-only").codes == ["missing-extended-key-usage"])
        var client = ValidationPolicy.webPKI
        client.purpose = .tlsClient
        #expect(await Lab.evaluate("client-auth-only", policy: client).isTrusted)
    }

    @Test func everyReasonIsReportedWhenSeveralApply() async throws {
        let pki = Lab.pki
        let bad = try pki.intermediate.leaf(
            dnsNames: ["other.lab.test"], notBefore: Date(timeIntervalSinceNow: -10 * 86_400), notAfter: Date(timeIntervalSinceNow: -86_400))
        let decision = await PathValidator(anchors: Lab.anchors).evaluate(try ServerTrust(presentedChain: bad.chain, host: "good.lab.test"))
        #expect(Set(decision.codes) == ["expired", "name-mismatch"])
    }

    @Test func sha1SignatureIsRefused() async throws {
        let rsaRoot = try LabAuthority.root(keyType: .rsa2048)
        let leaf = try rsaRoot.leaf(dnsNames: ["sha1.lab.test"], keyType: .rsa2048, signatureAlgorithm: .sha1WithRSAEncryption)
        let decision = await PathValidator(anchors: .only([rsaRoot.certificate])).evaluate(try ServerTrust(presentedChain: leaf.chain, host: "sha1.lab.test"))
        #expect(decision.codes == ["weak-signature-algorithm"])
    }

    @Test func customAnchorsAddToOrReplaceTheSystemSet() async throws {
        // Added to the system roots: the lab root works alongside them.
        #expect(await Lab.evaluate("good", anchors: .system(adding: [Lab.pki.root.certificate])).isTrusted)
        // System roots alone do not know the lab.
        #expect(await !Lab.evaluate("good", anchors: .system).isTrusted)
        // An intermediate may be the anchor (the path stops there).
        let viaIntermediate = await Lab.evaluate("good", anchors: .only([Lab.pki.intermediate.certificate]))
        #expect(viaIntermediate.isTrusted)
        #expect(viaIntermediate.validatedPath.count == 2)
        // A self-signed leaf may be pinned as its own anchor.
        #expect(await Lab.evaluate("self-signed", anchors: .only([Lab.chain("self-signed")[0]])).isTrusted)
    }

    @Test func maximumDepthIsEnforced() async throws {
        var authority = Lab.pki.root
        var intermediates: [Certificate] = []
        for index in 0..<3 {
            authority = try authority.intermediate(commonName: "Depth CA \(index)")
            intermediates.insert(authority.certificate, at: 0)
        }
        let leaf = try authority.leaf(dnsNames: ["deep.lab.test"])
        var policy = ValidationPolicy.webPKI
        policy.maximumIntermediates = 2
        let trust = try ServerTrust(presentedChain: [leaf.certificate] + intermediates, host: "deep.lab.test")
        #expect(await PathValidator(anchors: Lab.anchors, policy: policy).evaluate(trust).codes == ["path-too-long"])
        policy.maximumIntermediates = 3
        #expect(await PathValidator(anchors: Lab.anchors, policy: policy).evaluate(trust).isTrusted)
    }

    /// A hostile chain of many same-named intermediates is refused by the work budget, not searched exhaustively.
    @Test func pathologicalChainIsRefusedByTheWorkBudget() async throws {
        var certificates: [Certificate] = []
        var issuer = try LabAuthority.root(commonName: "Loop CA")
        for _ in 0..<60 {
            let next = try issuer.intermediate(commonName: "Loop CA")
            certificates.append(next.certificate)
            issuer = next
        }
        let leaf = try issuer.leaf(dnsNames: ["loop.lab.test"])
        let decision = await PathValidator(anchors: Lab.anchors).evaluate(
            try ServerTrust(presentedChain: [leaf.certificate] + certificates.reversed(), host: "loop.lab.test"))
        #expect(!decision.isTrusted)
        #expect(decision.codes.contains("path-too-costly"))
    }

    @Test func emptyChainIsRefused() async {
        let decision = await PathValidator().evaluate(ServerTrust(presentedChain: [], peerName: nil))
        #expect(decision.reasons == [.emptyChain])
    }
}

@Suite("PathValidator: explaining a missing path", .paced)
struct NoPathExplanationTests {
    @Test func chainEndingAtAnUntrustedCAIsNotBlamedOnAMissingIntermediate() async throws {
        // The good chain (leaf + intermediate) with only an unrelated root trusted.
        let decision = await PathValidator(anchors: .only([Lab.pki.untrustedRoot.certificate])).evaluate(Lab.trust("good"))
        #expect(
            decision.reasons.first
                == .noPathToTrustedAnchor(
                    .issuerNotTrusted(issuer: Lab.pki.root.certificate.subject.description, of: Lab.pki.intermediate.certificate.subject.description)))
        #expect(decision.closestPath.count == 2)
    }
}

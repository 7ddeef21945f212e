import Foundation
import Testing
import TrustLabPKI
import TrustTestSupport
import X509

@testable import Trust

/// The direct path (`PathValidator.decisionWithoutSuspending`) is a shortcut through the same search
/// swift-certificates' `Verifier` makes: whenever it answers, the full search answers the same, with the
/// same validated path; where the chain offers choices it steps aside.
@Suite("PathValidator: the direct path decides as the full search", .paced)
struct DirectPathTests {
    /// Chains in the shapes servers send, and in the shapes an attacker would try.
    static func cases() throws -> [(name: String, trust: ServerTrust, anchors: TrustAnchors, pins: Set<SPKIPin>)] {
        var cases: [(String, ServerTrust, TrustAnchors, Set<SPKIPin>)] = []
        let pki = Lab.pki
        for server in LabPKI.serverNames {
            let chain = Lab.chain(server)
            let host = LabPKI.hostName(for: server)
            cases.append((server, try ServerTrust(presentedChain: chain, host: host), Lab.anchors, []))
            guard chain.count > 1 else { continue }
            // Reversed intermediates, a duplicate, a distractor, the root appended, a foreign root appended.
            cases.append((server + " reversed", try ServerTrust(presentedChain: [chain[0]] + chain.dropFirst().reversed(), host: host), Lab.anchors, []))
            cases.append((server + " duplicate", try ServerTrust(presentedChain: chain + [chain[1]], host: host), Lab.anchors, []))
            cases.append(
                (
                    server + " distractor", try ServerTrust(presentedChain: chain + [pki.otherRoot.certificate, Lab.chain("mitm")[0]], host: host), Lab.anchors,
                    []
                ))
            cases.append((server + " with root", try ServerTrust(presentedChain: chain + [pki.root.certificate], host: host), Lab.anchors, []))
            // Pins: on the path, and only on an appended certificate (never satisfied by it).
            cases.append((server + " pinned", try ServerTrust(presentedChain: chain, host: host), Lab.anchors, [pki.intermediate.certificate.spkiPin]))
            cases.append(
                (
                    server + " pin appended", try ServerTrust(presentedChain: chain + [pki.otherRoot.certificate], host: host), Lab.anchors,
                    [pki.otherRoot.certificate.spkiPin]
                ))
        }
        // The intermediate itself as an anchor (a shorter path exists), and two anchors with one subject.
        let good = Lab.chain("good")
        cases.append(
            (
                "intermediate anchor", try ServerTrust(presentedChain: good, host: "good.lab.test"),
                .only([pki.root.certificate, pki.intermediate.certificate]), []
            ))
        let twin = try LabAuthority.root(commonName: "swift-trust Lab Root CA")
        #expect(twin.certificate.subject == pki.root.certificate.subject)
        cases.append(
            ("two anchors, one name", try ServerTrust(presentedChain: good, host: "good.lab.test"), .only([twin.certificate, pki.root.certificate]), []))
        cases.append(("twin anchor only", try ServerTrust(presentedChain: good, host: "good.lab.test"), .only([twin.certificate]), []))
        // Forgeries: a leaf naming the real intermediate as issuer but signed by an impostor with that
        // name; the impostor's own certificate beside the real one.
        let impostor = try LabAuthority.root(commonName: "swift-trust Lab Issuing CA")
        #expect(impostor.certificate.subject == pki.intermediate.certificate.subject)
        let forged = try impostor.leaf(dnsNames: ["good.lab.test"]).certificate
        cases.append(("forged leaf", try ServerTrust(presentedChain: [forged, pki.intermediate.certificate], host: "good.lab.test"), Lab.anchors, []))
        cases.append(
            (
                "forged leaf, impostor sent",
                try ServerTrust(presentedChain: [forged, pki.intermediate.certificate, impostor.certificate], host: "good.lab.test"), Lab.anchors, []
            ))
        cases.append(
            (
                "good leaf, impostor first",
                try ServerTrust(presentedChain: [good[0], impostor.certificate, pki.intermediate.certificate], host: "good.lab.test"), Lab.anchors, []
            ))
        // Two CAs certifying each other.
        let cycle = try LabCertificateCycle.make()
        cases.append(("cycle", try ServerTrust(presentedChain: cycle.presentedChain, host: cycle.host), .only([cycle.rootA.certificate]), []))
        // Longer chains.
        for depth in [3, 5] {
            let long = try LabLongChain.make(intermediates: depth, host: "long.lab.test", keyType: .p256)
            cases.append(("depth \(depth)", try ServerTrust(presentedChain: long.presentedChain, host: "long.lab.test"), .only([long.root.certificate]), []))
            cases.append(
                (
                    "depth \(depth) shuffled",
                    try ServerTrust(presentedChain: [long.presentedChain[0]] + long.presentedChain.dropFirst().reversed(), host: "long.lab.test"),
                    .only([long.root.certificate]), []
                ))
        }
        return cases
    }

    @Test func directAndFullSearchAgree() async throws {
        var answered = 0
        for (name, trust, anchors, pins) in try Self.cases() {
            var policy = ValidationPolicy.webPKI
            policy.pins = pins
            let direct = PathValidator(anchors: anchors, policy: policy)
            var search = direct
            search.triesDirectPath = false
            let full = await search.evaluate(trust)
            let decided = await direct.evaluate(trust)
            #expect(decided.isTrusted == full.isTrusted, "\(name)")
            #expect(decided.validatedPath == full.validatedPath, "\(name)")
            #expect(decided.reasons == full.reasons, "\(name)")
            if let quick = direct.decisionWithoutSuspending(trust) {
                answered += 1
                #expect(quick.isTrusted && full.isTrusted, "\(name)")
                #expect(quick.validatedPath == full.validatedPath, "\(name)")
            }
            #expect(search.decisionWithoutSuspending(trust) == nil)
            // A caller that already tried the direct path is not given it again; the search still decides alike.
            #expect(await direct.evaluate(afterImmediateMiss: trust).validatedPath == full.validatedPath, "\(name)")
            #expect(await direct.evaluate(afterImmediateMiss: trust).reasons == full.reasons, "\(name)")
        }
        // The shortcut does answer the common shapes.
        #expect(answered >= 8)
    }
}

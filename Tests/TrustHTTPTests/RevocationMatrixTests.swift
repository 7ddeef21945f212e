import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport
import X509

/// Every revocation outcome from both sources, both modes, decided as `CheckingRevocation` documents: {CRL, OCSP} ×
/// {good, revoked leaf, revoked intermediate, unknown, stale, unreachable, wrong signer} × {soft, hard}, whole-chain
/// checking of a fresh root → intermediate → leaf per case, through the engine and through a TrustHTTPClient's handshake.
@Suite("Revocation: the lab matrix", .serialized, .timeLimit(.minutes(5)), .paced)
struct RevocationMatrixTests {
    enum Source: String, CaseIterable { case crl, ocsp }
    enum Case: String, CaseIterable { case good, revokedLeaf, revokedIntermediate, unknown, stale, unreachable, wrongSigner }

    /// What the documentation says each case comes to: trusted, refused as `revoked`, or unknown (hard refuses with
    /// `revocation-status-unknown`, soft allows with a note).
    enum Outcome { case trusted, revoked, unknown }
    static func expected(_ situation: Case) -> Outcome {
        switch situation {
        case .good: .trusted
        case .revokedLeaf, .revokedIntermediate: .revoked
        case .unknown, .stale, .unreachable, .wrongSigner: .unknown
        }
    }

    /// A root, an intermediate and a leaf naming the case's sources, with the sources set up to say what the case says.
    struct Scenario {
        let root: LabAuthority
        let leaf: LabIdentity
    }

    static func scenario(_ source: Source, _ situation: Case, crls: LabCRLServer, responder: LabOCSPResponder, refusing: RefusingPort) throws -> Scenario {
        let tag = "\(source.rawValue)-\(situation.rawValue)-\(UUID().uuidString.prefix(8))"
        let root = try LabAuthority.root(commonName: "matrix root \(tag)")
        let unreachable = "http://127.0.0.1:\(refusing.port)/\(tag)"
        let stranger = try LabAuthority.root(commonName: "matrix stranger \(tag)")
        switch source {
        case .crl:
            let intermediate = try root.intermediate(commonName: "matrix CA \(tag)")
            // The intermediate has no CRL distribution point of its own: the root's CRL is published where the leaf's
            // issuer's is, and fetched for the leaf's chain through the leaf's own points (both URLs listed).
            let leafURL = situation == .unreachable ? unreachable : crls.url("\(tag)-leaf.crl")
            let leaf = try intermediate.leaf(dnsNames: ["good.lab.test"], crlDistributionPoints: [leafURL, crls.url("\(tag)-root.crl")])
            var leafCRL = try LabCRL(issuer: intermediate)
            var rootCRL = try LabCRL(issuer: root)
            switch situation {
            case .good, .unreachable: break
            case .revokedLeaf: leafCRL = try LabCRL(issuer: intermediate, revoked: [LabCRL.Revoked(leaf.certificate, reason: .keyCompromise)])
            case .revokedIntermediate: rootCRL = try LabCRL(issuer: root, revoked: [LabCRL.Revoked(intermediate.certificate, reason: .caCompromise)])
            case .unknown:
                var scope = LabCRL.Variation()
                scope.onlyCACertificates = true
                leafCRL = try LabCRL(issuer: intermediate, variation: scope)
            case .stale:
                leafCRL = try LabCRL(issuer: intermediate, thisUpdate: Date(timeIntervalSinceNow: -7_200), nextUpdate: Date(timeIntervalSinceNow: -3_600))
            case .wrongSigner: leafCRL = try LabCRL(issuer: intermediate, signer: stranger)
            }
            crls.publish(leafCRL.crl, as: "\(tag)-leaf.crl")
            crls.publish(rootCRL.crl, as: "\(tag)-root.crl")
            return Scenario(root: root, leaf: leaf)
        case .ocsp:
            let intermediate = try root.intermediate(commonName: "matrix CA \(tag)", ocspResponders: [responder.url])
            let leafURL = situation == .unreachable ? unreachable : responder.url
            let leaf = try intermediate.leaf(dnsNames: ["good.lab.test"], ocspResponders: [leafURL])
            responder.serve(root)
            responder.serve(intermediate)
            switch situation {
            case .good, .unreachable: break
            case .revokedLeaf: responder.set(.revoked(at: Date(timeIntervalSinceNow: -600), reason: .keyCompromise), for: leaf.certificate)
            case .revokedIntermediate: responder.set(.revoked(at: Date(timeIntervalSinceNow: -600), reason: .caCompromise), for: intermediate.certificate)
            case .unknown: responder.set(.unknown, for: leaf.certificate)
            case .stale:
                responder.update {
                    $0.variation.thisUpdate = -7_200
                    $0.variation.nextUpdate = -3_600
                }
            case .wrongSigner: responder.update { $0.signer = .stranger(stranger.identity) }
            }
            return Scenario(root: root, leaf: leaf)
        }
    }

    static func evaluator(_ mode: RevocationPolicy.Mode, anchor: LabAuthority) throws -> RevocationCheckingEvaluator {
        var policy = ValidationPolicy.webPKI
        policy.revocation = RevocationPolicy(mode: mode, depth: .chain)
        // The matrix is about what each answer means, not about the fetch budget (RevocationBudgetTests): a full
        // `swift test` beside a build can take longer than the default 4 s to fetch from loopback.
        return try RevocationCheckingEvaluator(
            anchors: .only([anchor.certificate]), policy: policy, fetcher: try PatientFetchers.crl(), ocspFetcher: try PatientFetchers.ocsp(),
            fetchBudget: PatientFetchers.fetchBudget)
    }

    @Test(arguments: Source.allCases)
    func everyCaseBothModesEngineAndSession(source: Source) async throws {
        let crls = try await LabCRLServer.start()
        let refusing = try RefusingPort()
        defer { refusing.close() }
        var failures: [String] = []
        for situation in Case.allCases {
            // A responder per case: stale and wrong-signer change how it answers everything.
            let responder = try await LabOCSPResponder.start(authorities: [])
            let scenario = try Self.scenario(source, situation, crls: crls, responder: responder, refusing: refusing)
            let server = try await LabServer.start(name: "matrix", host: "good.lab.test", chain: scenario.leaf.chain, privateKey: scenario.leaf.privateKey)
            for mode in [RevocationPolicy.Mode.soft, .hard] {
                let label = "\(source) \(situation) \(mode)"
                // The engine.
                let evaluator = try Self.evaluator(mode, anchor: scenario.root)
                let decision = await evaluator.evaluate(try ServerTrust(presentedChain: scenario.leaf.chain, host: "good.lab.test"))
                let outcome = Self.expected(situation)
                switch (outcome, mode) {
                case (.trusted, _):
                    if !decision.isTrusted { failures.append("\(label): refused \(decision.codes) \(decision.reasons)") }
                    if decision.validity == nil { failures.append("\(label): trusted without a validity window") }
                case (.revoked, _):
                    if decision.codes.first != "revoked" { failures.append("\(label): \(decision.codes) \(decision.reasons)") }
                case (.unknown, .hard):
                    if decision.codes.isEmpty || Set(decision.codes) != ["revocation-status-unknown"] {
                        failures.append("\(label): \(decision.codes) \(decision.reasons)")
                    }
                case (.unknown, _):
                    if !decision.isTrusted || !decision.notes.contains(where: { $0.contains("revocation checking is soft") }) {
                        failures.append("\(label): \(decision.isTrusted) \(decision.reasons) \(decision.notes)")
                    }
                }
                await evaluator.shutdown()
                // The TrustHTTPClient, with a fresh evaluator (nothing cached): the same decision in the handshake.
                let handshakeEvaluator = try Self.evaluator(mode, anchor: scenario.root)
                let session = try PatientFetchers.session(handshakeEvaluator)
                var error: TrustHTTPClientError?
                do {
                    _ = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/")))
                } catch let caught as TrustHTTPClientError {
                    error = caught
                }
                let refused = outcome == .revoked || (outcome == .unknown && mode == .hard)
                if refused != (error != nil) || (refused && error?.code != .serverCertificateUntrusted) {
                    failures.append("\(label) through the Session: \(String(describing: error))")
                }
                await session.shutdown()
                await handshakeEvaluator.shutdown()
            }
            try await server.shutdown()
            await responder.shutdown()
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        await crls.shutdown()
    }
}

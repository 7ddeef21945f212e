import Foundation
import SwiftASN1
import Testing
import Trust
import TrustLabPKI
import TrustTestSupport
import X509

/// CRLs (RFC 5280 §5, §6.3) given by the caller: parsing, scope, freshness, signer, modes and depth.
@Suite("Revocation: CRLs decide as RFC 5280 §6.3 says, soft or hard, leaf or chain", .timeLimit(.minutes(5)), .paced)
struct RevocationTests {
    static let leaf: LabIdentity = {
        do { return try Lab.pki.intermediate.leaf(dnsNames: ["crl.lab.test"]) } catch { fatalError("\(error)") }
    }()
    static let other: LabIdentity = {
        do { return try Lab.pki.intermediate.leaf(dnsNames: ["other-crl.lab.test"]) } catch { fatalError("\(error)") }
    }()

    static func decide(_ revocation: RevocationPolicy, for identity: LabIdentity = leaf, pins: Set<SPKIPin> = [], at time: Date = Date()) async throws
        -> TrustDecision
    {
        var policy = ValidationPolicy.webPKI
        policy.revocation = revocation
        policy.pins = pins
        let host = identity.certificate.subjectAlternativeNameStrings?.first ?? ""
        let trust = try ServerTrust(presentedChain: identity.chain, host: host, evaluationTime: time)
        let validator = PathValidator(anchors: Lab.anchors, policy: policy)
        let decision = await validator.evaluate(trust)
        return decision
    }

    static func crl(
        _ revoked: [LabCRL.Revoked] = [], issuer: LabAuthority = Lab.pki.intermediate, variation: LabCRL.Variation = LabCRL.Variation(),
        thisUpdate: Date = Date(timeIntervalSinceNow: -3_600), nextUpdate: Date? = Date(timeIntervalSinceNow: 86_400),
        signer: LabAuthority? = nil
    ) throws -> CertificateRevocationList {
        try LabCRL(issuer: issuer, revoked: revoked, thisUpdate: thisUpdate, nextUpdate: nextUpdate, variation: variation, signer: signer).crl
    }

    @Test(arguments: [RevocationPolicy.Mode.soft, .hard])
    func revokedLeafIsRefusedInEitherMode(_ mode: RevocationPolicy.Mode) async throws {
        let list = try Self.crl([LabCRL.Revoked(Self.other.certificate), LabCRL.Revoked(Self.leaf.certificate, reason: .keyCompromise)])
        let decision = try await Self.decide(RevocationPolicy(mode: mode, crls: [list]))
        #expect(!decision.isTrusted)
        #expect(decision.codes == ["revoked"], "\(decision.reasons)")
        let text = decision.reasons.first?.description ?? ""
        #expect(text.contains(Self.leaf.certificate.openSSLSerial) && text.contains("keyCompromise") && text.contains("Issuing CA"), "\(text)")
        // A pin on the path does not make a revoked leaf acceptable.
        let pinned = try await Self.decide(RevocationPolicy(mode: mode, crls: [list]), pins: [Self.leaf.certificate.spkiPin])
        #expect(pinned.codes == ["revoked"])
    }

    @Test func leafAbsentFromACurrentCRLIsGood() async throws {
        let list = try Self.crl([LabCRL.Revoked(Self.other.certificate)])
        let decision = try await Self.decide(RevocationPolicy(mode: .hard, crls: [list]))
        #expect(decision.isTrusted, "\(decision.reasons)")
        #expect(decision.notes.isEmpty)
        // The other leaf, listed, is refused by the same CRL.
        #expect(try await Self.decide(RevocationPolicy(mode: .hard, crls: [list]), for: Self.other).codes == ["revoked"])
    }

    @Test func unknownStatusIsRefusedWhenHardAndNotedWhenSoft() async throws {
        let hard = try await Self.decide(RevocationPolicy(mode: .hard))
        #expect(hard.codes == ["revocation-status-unknown"])
        #expect(hard.reasons.first?.description.contains("no CRL issued by") == true)
        let soft = try await Self.decide(RevocationPolicy(mode: .soft))
        #expect(soft.isTrusted)
        #expect(soft.notes.count == 1 && soft.notes.first?.contains("revocation checking is soft") == true, "\(soft.notes)")
        let off = try await Self.decide(RevocationPolicy(mode: .off))
        #expect(off.isTrusted && off.notes.isEmpty)
    }

    /// A CRL that lists the leaf but may not be used: each one leaves the status unknown.
    static let unusable: [(String, @Sendable () throws -> CertificateRevocationList)] = [
        (
            "stale",
            {
                try crl(
                    [LabCRL.Revoked(leaf.certificate)], thisUpdate: Date(timeIntervalSinceNow: -10 * 86_400), nextUpdate: Date(timeIntervalSinceNow: -86_400))
            }
        ),
        ("issued after the evaluation time", { try crl([LabCRL.Revoked(leaf.certificate)], thisUpdate: Date(timeIntervalSinceNow: 3_600)) }),
        ("not signed by the key", { try crl([LabCRL.Revoked(leaf.certificate)], signer: Lab.pki.otherRoot) }),
        ("no nextUpdate", { try crl([LabCRL.Revoked(leaf.certificate)], nextUpdate: nil) }),
        (
            "no CRLNumber",
            {
                try crl(
                    [LabCRL.Revoked(leaf.certificate)],
                    variation: {
                        var v = LabCRL.Variation()
                        v.omitsNumber = true
                        return v
                    }())
            }
        ),
        (
            "CRLNumber extension is critical",
            {
                try crl(
                    [LabCRL.Revoked(leaf.certificate)],
                    variation: {
                        var v = LabCRL.Variation()
                        v.criticalNumber = true
                        return v
                    }())
            }
        ),
        (
            "delta CRL",
            {
                try crl(
                    [LabCRL.Revoked(leaf.certificate)],
                    variation: {
                        var v = LabCRL.Variation()
                        v.delta = true
                        return v
                    }())
            }
        ),
        (
            "critical extension",
            {
                try crl(
                    [LabCRL.Revoked(leaf.certificate)],
                    variation: {
                        var v = LabCRL.Variation()
                        v.unknownCriticalExtension = true
                        return v
                    }())
            }
        ),
        (
            "CA certificates only",
            {
                try crl(
                    [LabCRL.Revoked(leaf.certificate)],
                    variation: {
                        var v = LabCRL.Variation()
                        v.onlyCACertificates = true
                        return v
                    }())
            }
        ),
        (
            "distribution point the certificate does not name",
            {
                try crl(
                    [LabCRL.Revoked(leaf.certificate)],
                    variation: {
                        var v = LabCRL.Variation()
                        v.distributionPoint = "http://crl.lab.test/partition-7.crl"
                        return v
                    }())
            }
        ),
    ]

    @Test(arguments: 0..<unusable.count)
    func unusableCRLsLeaveTheStatusUnknown(_ index: Int) async throws {
        let (problem, make) = Self.unusable[index]
        let list = try make()
        let hard = try await Self.decide(RevocationPolicy(mode: .hard, crls: [list]))
        #expect(hard.codes == ["revocation-status-unknown"], "\(problem): \(hard.reasons)")
        #expect(hard.reasons.first?.description.contains(problem) == true, "\(problem): \(hard.reasons)")
        let soft = try await Self.decide(RevocationPolicy(mode: .soft, crls: [list]))
        #expect(soft.isTrusted && soft.notes.first?.contains(problem) == true, "\(problem): \(soft.notes)")
        // A usable CRL beside it decides.
        let good = try Self.crl([])
        #expect(try await Self.decide(RevocationPolicy(mode: .hard, crls: [list, good])).isTrusted, "\(problem)")
    }

    @Test func scopedCRLs() async throws {
        var users = LabCRL.Variation()
        users.onlyUserCertificates = true
        // A CRL of end-entity certificates covers the leaf…
        #expect(
            try await Self.decide(RevocationPolicy(mode: .hard, crls: [try Self.crl([LabCRL.Revoked(Self.leaf.certificate)], variation: users)])).codes == [
                "revoked"
            ])
        // …and never the intermediate.
        let rootUsersOnly = try Self.crl([LabCRL.Revoked(Lab.pki.intermediate.certificate)], issuer: Lab.pki.root, variation: users)
        let chain = try await Self.decide(RevocationPolicy(mode: .hard, depth: .chain, crls: [rootUsersOnly, try Self.crl([])]))
        #expect(
            chain.codes == ["revocation-status-unknown"] && chain.reasons.first?.description.contains("end-entity certificates only") == true,
            "\(chain.reasons)")
        // Only some reasons: a listed leaf is revoked; an unlisted one is not known to be good.
        var some = LabCRL.Variation()
        some.onlySomeReasons = true
        #expect(
            try await Self.decide(RevocationPolicy(mode: .hard, crls: [try Self.crl([LabCRL.Revoked(Self.leaf.certificate)], variation: some)])).codes == [
                "revoked"
            ])
        let partial = try await Self.decide(RevocationPolicy(mode: .hard, crls: [try Self.crl([], variation: some)]))
        #expect(partial.codes == ["revocation-status-unknown"] && partial.reasons.first?.description.contains("only some revocation reasons") == true)
    }

    @Test func chainDepthChecksTheIntermediate() async throws {
        let rootCRL = try Self.crl([LabCRL.Revoked(Lab.pki.intermediate.certificate, reason: .caCompromise)], issuer: Lab.pki.root)
        let leafCRL = try Self.crl([])
        #expect(try await Self.decide(RevocationPolicy(mode: .hard, depth: .leaf, crls: [rootCRL, leafCRL])).isTrusted)
        let chain = try await Self.decide(RevocationPolicy(mode: .hard, depth: .chain, crls: [rootCRL, leafCRL]))
        #expect(
            chain.codes == ["revoked"] && chain.reasons.first?.description.contains("Issuing CA") == true
                && chain.reasons.first?.description.contains("cACompromise") == true)
        // Without the root's CRL, the intermediate's status is unknown.
        #expect(try await Self.decide(RevocationPolicy(mode: .hard, depth: .chain, crls: [leafCRL])).codes == ["revocation-status-unknown"])
        #expect(try await Self.decide(RevocationPolicy(mode: .soft, depth: .chain, crls: [leafCRL])).notes.count == 1)
    }

    @Test func shortLivedLeavesAreExemptUnlessConfigured() async throws {
        let start = Date(timeIntervalSinceNow: -3_600)
        // RFC 5280 §4.1.2.5: both ends count, so 604,799 s between them is a 7-day period; 604,800 s is one second more.
        let sevenDays = try Lab.pki.intermediate.leaf(dnsNames: ["short.lab.test"], notBefore: start, notAfter: start + 604_799)
        let longer = try Lab.pki.intermediate.leaf(dnsNames: ["short.lab.test"], notBefore: start, notAfter: start + 604_800)
        #expect(try await Self.decide(RevocationPolicy(mode: .hard), for: sevenDays).isTrusted)
        #expect(try await Self.decide(RevocationPolicy(mode: .hard), for: longer).codes == ["revocation-status-unknown"])
        #expect(try await Self.decide(RevocationPolicy(mode: .hard, shortLivedExemption: nil), for: sevenDays).codes == ["revocation-status-unknown"])
    }

    @Test func decisionsCarryTheCRLsWindowAndTheCacheKeepsToIt() async throws {
        let thisUpdate = Date(timeIntervalSinceNow: -600)
        let nextUpdate = Date(timeIntervalSinceNow: 600)
        let list = try Self.crl([], thisUpdate: thisUpdate, nextUpdate: nextUpdate)
        let decision = try await Self.decide(RevocationPolicy(mode: .hard, crls: [list]))
        #expect(decision.isTrusted)
        let validity = try #require(decision.validity)
        #expect(abs(validity.lowerBound.timeIntervalSince(thisUpdate)) < 1 && abs(validity.upperBound.timeIntervalSince(nextUpdate)) < 1, "\(validity)")
        // Without revocation nothing but the certificates bounds the decision.
        #expect(try await Self.decide(RevocationPolicy.off).validity == nil)
        // A cached decision is reused before nextUpdate, never after it (nor before thisUpdate).
        let cache = TrustEvaluationCache(capacity: 8, timeToLive: .seconds(3_600))
        let host = "crl.lab.test"
        cache.store(decision, for: try ServerTrust(presentedChain: Self.leaf.chain, host: host), policy: "crl")
        #expect(cache.decision(for: try ServerTrust(presentedChain: Self.leaf.chain, host: host, evaluationTime: nextUpdate - 60), policy: "crl") != nil)
        #expect(cache.decision(for: try ServerTrust(presentedChain: Self.leaf.chain, host: host, evaluationTime: nextUpdate + 60), policy: "crl") == nil)
        cache.store(decision, for: try ServerTrust(presentedChain: Self.leaf.chain, host: host), policy: "crl")
        #expect(cache.decision(for: try ServerTrust(presentedChain: Self.leaf.chain, host: host, evaluationTime: thisUpdate - 60), policy: "crl") == nil)
    }

    @Test func holdAndRemoval() async throws {
        let held = try Self.crl([LabCRL.Revoked(Self.leaf.certificate, reason: .certificateHold)])
        let decision = try await Self.decide(RevocationPolicy(mode: .hard, crls: [held]))
        #expect(decision.codes == ["revoked"] && decision.reasons.first?.description.contains("certificateHold") == true)
        let removed = try Self.crl([LabCRL.Revoked(Self.leaf.certificate, reason: .removeFromCRL)])
        #expect(try await Self.decide(RevocationPolicy(mode: .hard, crls: [removed])).isTrusted)
    }

    @Test func parsingIsStrictAndTyped() throws {
        let list = try Self.crl([LabCRL.Revoked(Self.leaf.certificate, reason: .superseded)])
        // PEM and DER, one or several.
        let pem = PEMDocument(type: "X509 CRL", derBytes: list.derBytes).pemString
        #expect(try CertificateRevocationList.parseAll(Array(pem.utf8)) == [list])
        #expect(try CertificateRevocationList.parseAll(Array((pem + "\n" + pem).utf8)).count == 2)
        #expect(try CertificateRevocationList.parseAll(list.derBytes) == [list])
        #expect(list.entry(for: Self.leaf.certificate)?.reason == .superseded)
        #expect(list.entry(for: Self.other.certificate) == nil)
        #expect(list.crlNumber == [1] && list.nextUpdate != nil && list.issuer == Lab.pki.intermediate.certificate.subject)
        // Broken inputs: each a ParseError, never a crash.
        let broken: [[UInt8]] = [
            [], [0x30], Array(list.derBytes.dropLast()), list.derBytes + [0x00], Array("-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n".utf8),
            Array("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8), [0xFF, 0xFE],
        ]
        for bytes in broken {
            #expect(throws: CertificateRevocationList.ParseError.self) { try CertificateRevocationList.parseAll(bytes) }
        }
    }

    @Test func mutatedCRLsNeverCrash() throws {
        let list = try Self.crl([LabCRL.Revoked(Self.leaf.certificate, reason: .keyCompromise), LabCRL.Revoked(Self.other.certificate)])
        let seed = UInt64.random(in: 0...UInt64.max)
        print("RevocationTests.mutatedCRLsNeverCrash seed \(seed)")
        var generator = SeededGenerator(seed: seed)
        var parsed = 0
        for _ in 0..<3_000 {
            var bytes = list.derBytes
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] = UInt8.random(in: 0...255, using: &generator)
            }
            if let mutated = try? CertificateRevocationList(derEncoded: bytes) {
                parsed += 1
                // Whatever parses is still judged: changed bytes never verify.
                if mutated.derBytes != list.derBytes { #expect(!mutated.isSigned(by: Lab.pki.intermediate.certificate.publicKey), "seed \(seed)") }
            }
        }
        #expect(parsed < 3_000)
    }

    @Test func largeListsAreLookedUpByHash() throws {
        var revoked = (0..<20_000).map { index -> LabCRL.Revoked in
            var entry = LabCRL.Revoked(Self.other.certificate)
            entry.serialNumber = [0x01] + withUnsafeBytes(of: UInt32(index).bigEndian, Array.init)
            return entry
        }
        revoked.append(LabCRL.Revoked(Self.leaf.certificate))
        let list = try Self.crl(revoked)
        #expect(list.count == 20_001)
        #expect(list.entry(for: Self.leaf.certificate) != nil)
        #expect(list.entry(for: Self.other.certificate) == nil)
        #expect(list.entry(forSerialNumber: [0x00, 0x01, 0x00, 0x00, 0x4E, 0x1F]) != nil)  // 19,999 with a leading zero
        // A magnitude whose first bit is set is written with a sign octet and found either way.
        var high = LabCRL.Revoked(Self.other.certificate)
        high.serialNumber = [0x80, 0x01]
        let signed = try Self.crl([high])
        #expect(signed.entry(forSerialNumber: [0x80, 0x01])?.serialNumber == [0x00, 0x80, 0x01])
        #expect(signed.entry(forSerialNumber: [0x01]) == nil)
    }
}

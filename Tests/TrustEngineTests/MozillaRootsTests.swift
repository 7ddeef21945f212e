import Foundation
import Synchronization
import Testing
import Trust
import TrustLabPKI
import X509

/// The embedded Mozilla root store (generated from NSS's certdata.txt) and NSS's refusals, applied as NSS applies
/// them: a listed root without server trust anchors nothing; a server distrust-after date refuses the chains whose
/// leaf's notBefore is later.
@Suite("Mozilla's root store and NSS's distrust rules")
struct MozillaRootsTests {
    private static func utc(_ text: String) throws -> Date {
        try #require(ISO8601DateFormatter().date(from: text))
    }

    @Test func theEmbeddedStoreHoldsWhatNSSSays() throws {
        let store = MozillaRootStore.shared
        #expect(store.entries.count == 167)
        #expect(store.trusted.count == 121 && MozillaRoots.count == 121)
        #expect(store.entries.filter { $0.serverTrust == .notTrusted }.count == 46)
        // E-Tugra's three roots were removed after its 2023 incident: not listed at all.
        #expect(!store.entries.contains { $0.label.localizedCaseInsensitiveContains("tugra") })
        // The five server distrust-after dates: four Entrust roots after 2024-11-30, Chunghwa's ePKI after 2025-04-15.
        let dated = Dictionary(uniqueKeysWithValues: store.entries.compactMap { entry in entry.serverDistrustAfter.map { (entry.label, $0) } })
        #expect(
            dated == [
                "Entrust.net Premium 2048 Secure Server CA": try Self.utc("2024-11-30T23:59:59Z"),
                "Entrust Root Certification Authority": try Self.utc("2024-11-30T23:59:59Z"),
                "Entrust Root Certification Authority - G2": try Self.utc("2024-11-30T23:59:59Z"),
                "Entrust Root Certification Authority - EC1": try Self.utc("2024-11-30T23:59:59Z"),
                "ePKI Root Certification Authority": try Self.utc("2025-04-15T23:59:59Z"),
            ])
        // The generator's key hashes are the certificates' own (its DER walk agrees with swift-certificates').
        for entry in store.entries {
            let certificate = try #require(entry.certificate, "\(entry.label) does not parse")
            #expect(certificate.spkiPin == entry.spki, "\(entry.label)")
        }
        // Every trusted root is found by subject, as a path search looks it up.
        #expect(MozillaRoots.certificates.count == 121)
    }

    @Test func storesAreChosenByName() {
        #expect(RootStore.default == .systemAndMozilla)
        for store in RootStore.all { #expect(RootStore(name: store.name) == store) }
        #expect(RootStore(name: "firefox") == nil)
        #expect(TrustAnchors.system.rootStore == .default)
    }

    /// A lab PKI whose root the test store lists as NSS would, and a leaf issued at `issued`.
    private struct Fixture {
        let root: LabAuthority
        let chain: [Certificate]

        init(issued: Date) throws {
            root = try LabAuthority.root(commonName: "Lab Distrusted Root", notBefore: issued.addingTimeInterval(-10 * 86_400))
            let leaf = try root.leaf(dnsNames: ["site.lab.test"], notBefore: issued, notAfter: issued.addingTimeInterval(90 * 86_400))
            chain = [leaf.certificate]
        }

        func store(server: String, distrustAfter: Date?) -> MozillaRootStore {
            var header = "# label: Lab Distrusted Root\n# server: \(server)\n# spki-sha256: \(root.certificate.spkiPin.base64)\n"
            if let distrustAfter { header += "# server-distrust-after: \(Int(distrustAfter.timeIntervalSince1970)) lab\n" }
            return MozillaRootStore(pem: header + root.certificate.pemString)
        }

        /// The decision with `store`'s facts about the root, the root a public one (not a custom anchor).
        func decide(_ store: MozillaRootStore, at time: Date) async throws -> TrustDecision {
            let validator = PathValidator(anchors: .only([root.certificate]), additionalRules: [MozillaRootRule(customAnchors: [], store: { store })])
            return await validator.evaluate(try ServerTrust(presentedChain: chain, host: "site.lab.test", evaluationTime: time))
        }
    }

    @Test func aDistrustAfterDateRefusesOnlyCertificatesIssuedAfterIt() async throws {
        let distrustAfter = Date().addingTimeInterval(-30 * 86_400)
        let now = Date()
        // Issued the day before the date: trusted, as NSS trusts the certificates a phased-out CA issued in time.
        let before = try Fixture(issued: distrustAfter.addingTimeInterval(-86_400))
        let kept = try await before.decide(before.store(server: "trusted", distrustAfter: distrustAfter), at: now)
        #expect(kept.isTrusted, "\(kept.reasons)")
        // Issued on the date's last second: still trusted (NSS refuses a notBefore *after* the date).
        let onTheDate = try Fixture(issued: Date(timeIntervalSince1970: distrustAfter.timeIntervalSince1970.rounded(.down)))
        #expect(
            try await onTheDate.decide(
                onTheDate.store(server: "trusted", distrustAfter: Date(timeIntervalSince1970: distrustAfter.timeIntervalSince1970.rounded(.down))), at: now
            ).isTrusted)
        // Issued the day after: refused, naming the root, NSS's label and the rule.
        let after = try Fixture(issued: distrustAfter.addingTimeInterval(86_400))
        let refused = try await after.decide(after.store(server: "trusted", distrustAfter: distrustAfter), at: now)
        #expect(!refused.isTrusted)
        #expect(refused.reasons.map(\.kind) == [.rootDistrusted])
        #expect(refused.reasons.first?.description.contains("Lab Distrusted Root in Mozilla's root store") == true)
        #expect(refused.reasons.first?.description.contains("issued until") == true)
        // Without the date, the same chain is trusted.
        #expect(try await after.decide(after.store(server: "trusted", distrustAfter: nil), at: now).isTrusted)
    }

    @Test func aListedRootWithoutServerTrustAnchorsNothing() async throws {
        let fixture = try Fixture(issued: Date().addingTimeInterval(-86_400))
        for server in ["not-trusted", "distrusted"] {
            let decision = try await fixture.decide(fixture.store(server: server, distrustAfter: nil), at: Date())
            #expect(!decision.isTrusted && decision.reasons.map(\.kind) == [.rootDistrusted], "\(server): \(decision.reasons)")
        }
    }

    @Test func aRootNSSDoesNotListIsKeptAndNoted() async throws {
        let fixture = try Fixture(issued: Date().addingTimeInterval(-86_400))
        let decision = try await fixture.decide(MozillaRootStore(pem: ""), at: Date())
        #expect(decision.isTrusted)
        #expect(decision.notes.contains { $0.contains("a root of the system bundle that Mozilla's root store does not list") })
    }

    /// Every validator that includes the system roots has this rule, the default configuration's among them: it must
    /// not read the embedded store (300 KB) until a path ends at a public root.
    @Test func theStoreIsReadOnlyWhenAPathEndsAtAPublicRoot() async throws {
        final class Reads: Sendable { let count = Atomic(0) }
        let fixture = try Fixture(issued: Date().addingTimeInterval(-86_400))
        let store = fixture.store(server: "trusted", distrustAfter: nil)
        let reads = Reads()
        let read: @Sendable () -> MozillaRootStore = {
            reads.count.add(1, ordering: .relaxed)
            return store
        }
        let trust = try ServerTrust(presentedChain: fixture.chain, host: "site.lab.test")
        let custom = PathValidator(
            anchors: .only([fixture.root.certificate]), additionalRules: [MozillaRootRule(customAnchors: [fixture.root.certificate], store: read)])
        #expect(reads.count.load(ordering: .relaxed) == 0, "read when the rule was made")
        #expect(await custom.evaluate(trust).isTrusted)
        #expect(reads.count.load(ordering: .relaxed) == 0, "read for a path that ends at a custom anchor")
        let publicRoot = PathValidator(anchors: .only([fixture.root.certificate]), additionalRules: [MozillaRootRule(customAnchors: [], store: read)])
        #expect(await publicRoot.evaluate(trust).isTrusted)
        #expect(reads.count.load(ordering: .relaxed) > 0, "not read for a path that ends at a public root")
    }

    @Test func customAnchorsAreTheApplicationsChoice() async throws {
        // The same root given as an anchor by the application: NSS's refusal does not apply.
        let fixture = try Fixture(issued: Date().addingTimeInterval(-86_400))
        let store = fixture.store(server: "not-trusted", distrustAfter: nil)
        let validator = PathValidator(
            anchors: .only([fixture.root.certificate]), additionalRules: [MozillaRootRule(customAnchors: [fixture.root.certificate], store: { store })])
        #expect(await validator.evaluate(try ServerTrust(presentedChain: fixture.chain, host: "site.lab.test")).isTrusted)
    }
}

import Foundation
import Testing
import Trust
import TrustLabPKI
import TrustTestSupport
import X509

/// Every MUST of the X.509-SVID validation rules (X509-SVID.md; SPIFFE-ID.md §3), accepted and refused, with
/// SVIDs the lab makes: one test per rule, named after it.
@Suite("X.509-SVID validation: every MUST, accepted and refused")
struct SVIDValidationTests {
    /// Two trust domains, each with its own root; `example.org` also has a signing intermediate.
    struct Domains: Sendable {
        let root: LabAuthority
        let intermediate: LabAuthority
        let otherRoot: LabAuthority
        let bundles: SPIFFETrustBundles
    }

    static let domains: Domains = {
        do {
            let root = try LabAuthority.spiffeRoot(trustDomain: "example.org")
            let intermediate = try root.spiffeSigningCertificate(commonName: "example.org signing CA", uris: ["spiffe://example.org"])
            let otherRoot = try LabAuthority.spiffeRoot(trustDomain: "other.test")
            let bundles = SPIFFETrustBundles([
                SPIFFEBundle(trustDomain: try SPIFFETrustDomain(parsing: "example.org"), anchors: [root.certificate]),
                SPIFFEBundle(trustDomain: try SPIFFETrustDomain(parsing: "other.test"), anchors: [otherRoot.certificate]),
            ])
            return Domains(root: root, intermediate: intermediate, otherRoot: otherRoot, bundles: bundles)
        } catch {
            fatalError("cannot make the SPIFFE lab: \(error)")
        }
    }()

    static var root: LabAuthority { domains.root }
    static var intermediate: LabAuthority { domains.intermediate }

    /// The decision on `leaf`'s chain (with no peer name: an SVID has none) for the IDs `allowed` matches.
    static func decide(_ leaf: LabIdentity, allowed: [String] = ["spiffe://example.org", "spiffe://other.test"]) async throws -> TrustDecision {
        let evaluator = try SPIFFETrustEvaluator(bundles: domains.bundles, allowedIDs: try allowed.map { try SPIFFEIDMatcher(parsing: $0) })
        return await evaluator.evaluate(ServerTrust(presentedChain: leaf.chain, peerName: nil))
    }

    /// The requirements the decision names as broken.
    static func broken(_ decision: TrustDecision) -> [SVIDRequirement] {
        decision.reasons.compactMap { if case .svidRequirementNotMet(_, _, let requirement) = $0.detail { return requirement } else { return nil } }
    }

    /// `leaf` is trusted.
    static func expectAccepted(_ leaf: LabIdentity, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let decision = try await decide(leaf)
        #expect(decision.isTrusted, "\(decision.reasons)", sourceLocation: sourceLocation)
    }

    /// `leaf` is refused, and `requirement` is among the reasons.
    static func expectRefused(_ leaf: LabIdentity, _ requirement: SVIDRequirement, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let decision = try await decide(leaf)
        #expect(!decision.isTrusted, sourceLocation: sourceLocation)
        #expect(broken(decision).contains(requirement), "\(decision.reasons)", sourceLocation: sourceLocation)
    }

    // MARK: the SPIFFE ID (X509-SVID §2, §3.1, §5.2)

    /// §2, §5.2: exactly one URI SAN; none or two are refused.
    @Test func exactlyOneURISAN() async throws {
        try await Self.expectAccepted(try Self.intermediate.svid("spiffe://example.org/web"))
        for uris in [[], ["spiffe://example.org/web", "spiffe://example.org/db"], ["spiffe://example.org/web", "https://example.org/"]] {
            let decision = try await Self.decide(try Self.intermediate.svid("-", uris: uris))
            #expect(!decision.isTrusted)
            #expect(decision.reasons.contains(.svidURICount(subject: decision.presentedChain[0].subject.description, uris: uris)), "\(decision.reasons)")
        }
    }

    /// §5.2: the scheme is `spiffe`.
    @Test func schemeIsSPIFFE() async throws {
        try await Self.expectAccepted(try Self.intermediate.svid("spiffe://example.org/web"))
        let decision = try await Self.decide(try Self.intermediate.svid("https://example.org/web"))
        #expect(!decision.isTrusted)
        #expect(
            decision.reasons.contains { if case .svidInvalidSPIFFEID(_, let error) = $0.detail, case .wrongScheme = error.detail { true } else { false } },
            "\(decision.reasons)")
    }

    /// SPIFFE-ID §2: the URI SAN is a valid SPIFFE ID (trust domain and path characters, no port, query, dot segment…).
    @Test func spiffeIDIsValid() async throws {
        try await Self.expectAccepted(try Self.intermediate.svid("spiffe://example.org/ns/prod/sa/web-1_a.b"))
        for bad in ["spiffe://Example.org/web", "spiffe://example.org:443/web", "spiffe://example.org/a/../web", "spiffe://example.org/web/"] {
            let decision = try await Self.decide(try Self.intermediate.svid(bad))
            #expect(!decision.isTrusted, "\(bad)")
            #expect(decision.codes.contains("svid-invalid-spiffe-id"), "\(bad): \(decision.reasons)")
        }
    }

    /// §3.1, §5.2: a leaf's SPIFFE ID has a non-root path.
    @Test func leafIDHasPath() async throws {
        try await Self.expectAccepted(try Self.intermediate.svid("spiffe://example.org/w"))
        try await Self.expectRefused(try Self.intermediate.svid("spiffe://example.org"), .leafIDHasPath)
    }

    /// §3.1: without a subject, the URI SAN extension is critical.
    @Test func uriSANCriticalWithoutSubject() async throws {
        try await Self.expectAccepted(try Self.intermediate.svid("spiffe://example.org/web", hasSubject: false, sanCritical: true))
        try await Self.expectRefused(
            try Self.intermediate.svid("spiffe://example.org/web", hasSubject: false, sanCritical: false), .uriSANCriticalWithoutSubject)
    }

    // MARK: the leaf (X509-SVID §4.1, §4.3, §5.2)

    /// §4.1, §5.2: a leaf's basicConstraints cA is false (an absent extension means false).
    @Test func leafIsNotCA() async throws {
        try await Self.expectAccepted(try Self.intermediate.svid("spiffe://example.org/web", isCA: false))
        try await Self.expectAccepted(try Self.intermediate.svid("spiffe://example.org/web", isCA: nil))
        try await Self.expectRefused(try Self.intermediate.svid("spiffe://example.org/web", isCA: true), .leafIsNotCA)
    }

    /// §4.3: every SVID carries a keyUsage extension.
    @Test func keyUsagePresent() async throws {
        try await Self.expectAccepted(try Self.intermediate.svid("spiffe://example.org/web"))
        try await Self.expectRefused(try Self.intermediate.svid("spiffe://example.org/web", keyUsage: nil), .keyUsagePresent)
    }

    /// §4.3: the keyUsage extension is critical.
    @Test func keyUsageCritical() async throws {
        try await Self.expectAccepted(try Self.intermediate.svid("spiffe://example.org/web", keyUsageCritical: true))
        try await Self.expectRefused(try Self.intermediate.svid("spiffe://example.org/web", keyUsageCritical: false), .keyUsageCritical)
    }

    /// §4.3: a leaf asserts digitalSignature (keyEncipherment and keyAgreement MAY be added).
    @Test func leafDigitalSignature() async throws {
        try await Self.expectAccepted(
            try Self.intermediate.svid("spiffe://example.org/web", keyUsage: KeyUsage(digitalSignature: true, keyEncipherment: true, keyAgreement: true)))
        try await Self.expectRefused(
            try Self.intermediate.svid("spiffe://example.org/web", keyUsage: KeyUsage(keyEncipherment: true)), .leafDigitalSignature)
    }

    /// §4.3, §5.2: a leaf does not assert keyCertSign.
    @Test func leafNoKeyCertSign() async throws {
        try await Self.expectAccepted(try Self.intermediate.svid("spiffe://example.org/web", keyUsage: KeyUsage(digitalSignature: true)))
        try await Self.expectRefused(
            try Self.intermediate.svid("spiffe://example.org/web", keyUsage: KeyUsage(digitalSignature: true, keyCertSign: true)), .leafNoKeyCertSign)
    }

    /// §4.3, §5.2: a leaf does not assert cRLSign.
    @Test func leafNoCRLSign() async throws {
        try await Self.expectAccepted(try Self.intermediate.svid("spiffe://example.org/web", keyUsage: KeyUsage(digitalSignature: true)))
        try await Self.expectRefused(
            try Self.intermediate.svid("spiffe://example.org/web", keyUsage: KeyUsage(digitalSignature: true, cRLSign: true)), .leafNoCRLSign)
    }

    // MARK: signing certificates (X509-SVID §3.2, §4.1, §4.3)

    /// §3.2, §4.1: a signing certificate's basicConstraints cA is true.
    @Test func signingCertificateIsCA() async throws {
        try await Self.expectAccepted(try Self.intermediate.svid("spiffe://example.org/web"))
        let notCA = try Self.root.spiffeSigningCertificate(commonName: "not a CA", uris: ["spiffe://example.org"], isCA: false)
        try await Self.expectRefused(try notCA.svid("spiffe://example.org/web"), .signingCertificateIsCA)
    }

    /// §3.2, §4.3: a signing certificate asserts keyCertSign.
    @Test func signingCertificateKeyCertSign() async throws {
        try await Self.expectAccepted(try Self.intermediate.svid("spiffe://example.org/web"))
        let noCertSign = try Self.root.spiffeSigningCertificate(
            commonName: "no keyCertSign", uris: ["spiffe://example.org"], keyUsage: KeyUsage(digitalSignature: true, cRLSign: true))
        try await Self.expectRefused(try noCertSign.svid("spiffe://example.org/web"), .signingCertificateKeyCertSign)
        let noKeyUsage = try Self.root.spiffeSigningCertificate(commonName: "no keyUsage", uris: ["spiffe://example.org"], keyUsage: nil)
        try await Self.expectRefused(try noKeyUsage.svid("spiffe://example.org/web"), .keyUsagePresent)
        let notCritical = try Self.root.spiffeSigningCertificate(commonName: "keyUsage not critical", uris: ["spiffe://example.org"], keyUsageCritical: false)
        try await Self.expectRefused(try notCritical.svid("spiffe://example.org/web"), .keyUsageCritical)
    }

    /// §3.2: a signing certificate's SPIFFE ID, if present, has no path (one without a SPIFFE ID is allowed).
    @Test func signingIDHasNoPath() async throws {
        let unnamed = try Self.root.spiffeSigningCertificate(commonName: "unnamed CA", uris: [])
        try await Self.expectAccepted(try unnamed.svid("spiffe://example.org/web"))
        let withPath = try Self.root.spiffeSigningCertificate(commonName: "CA with a path", uris: ["spiffe://example.org/ca"])
        try await Self.expectRefused(try withPath.svid("spiffe://example.org/web"), .signingIDHasNoPath)
    }

    /// §4.3's "MUST be marked critical" and §3.2's pathless ID bind signing SVIDs, not a bundle's root (§5.1: the
    /// trust domain's authority): a root whose keyUsage is not critical vouches for its SVIDs, directly or through a
    /// signing certificate; cA and keyCertSign (§4.1, §4.3) still bind it, and a signing certificate under it that is
    /// no anchor is still held to criticality.
    @Test func aBundleRootWithANonCriticalKeyUsageIsAnAnchor() async throws {
        let root = try LabAuthority.spiffeRoot(trustDomain: "example.org", keyUsageCritical: false)
        let bundles = SPIFFETrustBundles([SPIFFEBundle(trustDomain: try SPIFFETrustDomain(parsing: "example.org"), anchors: [root.certificate])])
        let evaluator = try SPIFFETrustEvaluator(bundles: bundles, allowedIDs: [try SPIFFEIDMatcher(parsing: "spiffe://example.org")])
        let signing = try root.spiffeSigningCertificate(commonName: "signing CA", uris: ["spiffe://example.org"])
        for leaf in [try root.svid("spiffe://example.org/direct"), try signing.svid("spiffe://example.org/web")] {
            let decision = await evaluator.evaluate(ServerTrust(presentedChain: leaf.chain, peerName: nil))
            #expect(decision.isTrusted, "\(decision.reasons)")
        }
        let notCritical = try root.spiffeSigningCertificate(commonName: "keyUsage not critical", uris: ["spiffe://example.org"], keyUsageCritical: false)
        let refused = await evaluator.evaluate(ServerTrust(presentedChain: try notCritical.svid("spiffe://example.org/web").chain, peerName: nil))
        #expect(Self.broken(refused) == [.keyUsageCritical], "\(refused.reasons)")
    }

    /// A leaf may hold thousands of URI SANs: a broken rule's reason names the first 20 and counts the rest.
    @Test func aReasonNamesAtMostTwentyURIs() async throws {
        let uris = (0..<300).map { "spiffe://example.org/workload-\($0)" }
        let decision = try await Self.decide(try Self.intermediate.svid("-", uris: uris, keyUsage: nil))
        let shown = decision.reasons.compactMap { reason -> String? in
            if case .svidRequirementNotMet(_, let seen, .keyUsagePresent) = reason.detail { return seen }
            return nil
        }
        #expect(shown.count == 1, "\(decision.reasons)")
        #expect(shown.allSatisfy { $0.contains("workload-19") && !$0.contains("workload-20") && $0.hasSuffix("and 280 more") }, "\(shown)")
    }

    // MARK: path validation and trust domains (X509-SVID §5.1, SPIFFE-ID §3)

    /// §5.1: RFC 5280 path validation: an expired SVID, or one signed by a CA in no bundle, is refused.
    @Test func pathValidationFollowsRFC5280() async throws {
        try await Self.expectAccepted(try Self.root.svid("spiffe://example.org/direct"))
        let expired = try await Self.decide(
            try Self.intermediate.svid(
                "spiffe://example.org/web", notBefore: Date(timeIntervalSinceNow: -9 * 86_400), notAfter: Date(timeIntervalSinceNow: -86_400)))
        #expect(expired.codes.contains("expired"), "\(expired.reasons)")
        let stranger = try LabAuthority.spiffeRoot(trustDomain: "example.org")
        let unknown = try await Self.decide(try stranger.svid("spiffe://example.org/web"))
        #expect(!unknown.isTrusted && unknown.codes.contains("no-path-to-trusted-anchor"), "\(unknown.reasons)")
    }

    /// SPIFFE-ID §3: an SVID is signed by an authority of its own trust domain — another trusted domain's root does not
    /// vouch for it, and a domain without a bundle is not trusted.
    @Test func pathEndsAtTheBundleOfTheIDsTrustDomain() async throws {
        try await Self.expectAccepted(try Self.domains.otherRoot.svid("spiffe://other.test/api"))
        // example.org's root signs an ID of other.test: both domains are trusted, but not for each other.
        let crossed = try await Self.decide(try Self.root.svid("spiffe://other.test/api"))
        #expect(!crossed.isTrusted)
        #expect(
            crossed.reasons.contains {
                if case .spiffeTrustDomainNotTrusted("spiffe://other.test/api", "other.test", let anchor?) = $0.detail {
                    anchor.contains("example.org")
                } else {
                    false
                }
            }, "\(crossed.reasons)")
        let unbundled = try await Self.decide(try Self.root.svid("spiffe://elsewhere.test/api"), allowed: ["spiffe://example.org"])
        #expect(unbundled.reasons.contains(.spiffeTrustDomainNotTrusted(spiffeID: "spiffe://elsewhere.test/api", trustDomain: "elsewhere.test", anchor: nil)))
    }

    /// The allowed IDs decide last: a valid, trusted SVID whose ID no matcher allows is refused, naming the ID and the rule.
    @Test func allowedIDsMatch() async throws {
        let leaf = try Self.intermediate.svid("spiffe://example.org/ns/ab")
        #expect(try await Self.decide(leaf, allowed: ["spiffe://example.org/ns/ab"]).isTrusted)
        #expect(try await Self.decide(leaf, allowed: ["spiffe://example.org/ns/*"]).isTrusted)
        let refused = try await Self.decide(leaf, allowed: ["spiffe://example.org/ns/a/*", "spiffe://other.test"])
        #expect(!refused.isTrusted)
        #expect(
            refused.reasons == [.spiffeIDNotAllowed(spiffeID: "spiffe://example.org/ns/ab", allowed: ["spiffe://example.org/ns/a/*", "spiffe://other.test"])])
    }

    /// A server's SVID holds no DNS name, and none is checked even when the trust carries one.
    @Test func noHostNameIsChecked() async throws {
        let leaf = try Self.intermediate.svid("spiffe://example.org/web")
        let evaluator = try SPIFFETrustEvaluator(bundles: Self.domains.bundles, allowedIDs: [try SPIFFEIDMatcher(parsing: "spiffe://example.org/web")])
        let decision = await evaluator.evaluate(try ServerTrust(presentedChain: leaf.chain, host: "127.0.0.1"))
        #expect(decision.isTrusted, "\(decision.reasons)")
    }

    /// Configurations that could never trust anyone are refused when the evaluator is made.
    @Test func uselessConfigurationsAreRefused() throws {
        let bundles = Self.domains.bundles
        #expect(throws: SPIFFEConfigurationError.noAllowedIDs) { try SPIFFETrustEvaluator(bundles: bundles, allowedIDs: []) }
        #expect(throws: SPIFFEConfigurationError.noBundles) {
            try SPIFFETrustEvaluator(bundles: SPIFFETrustBundles([]), allowedIDs: [try SPIFFEIDMatcher(parsing: "spiffe://example.org")])
        }
        #expect(throws: SPIFFEConfigurationError.self) {
            try SPIFFETrustEvaluator(bundles: bundles, allowedIDs: [try SPIFFEIDMatcher(parsing: "spiffe://elsewhere.test/a")])
        }
    }

    /// Bundles load from PEM files: each certificate's own SPIFFE ID names its trust domain, or the caller does.
    @Test func bundlesLoadFromPEMFiles() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let both = dir + "/both.pem"
        try (Self.root.identity.certificatePEM + Self.domains.otherRoot.identity.certificatePEM).write(toFile: both, atomically: true, encoding: .utf8)
        let loaded = SPIFFETrustBundles(try SPIFFEBundle.load(contentsOf: both))
        #expect(loaded.trustDomains.map(\.name) == ["example.org", "other.test"])
        #expect(loaded.anchors(for: try SPIFFETrustDomain(parsing: "other.test")) == [Self.domains.otherRoot.certificate])
        let unnamed = dir + "/unnamed.pem"
        try LabAuthority.root(commonName: "no SPIFFE ID").identity.certificatePEM.write(toFile: unnamed, atomically: true, encoding: .utf8)
        #expect(throws: SPIFFEBundleError.self) { try SPIFFEBundle.load(contentsOf: unnamed) }
        let named = try SPIFFEBundle.load(contentsOf: unnamed, trustDomain: try SPIFFETrustDomain(parsing: "legacy.test"))
        #expect(named.map(\.trustDomain.name) == ["legacy.test"])
        #expect(throws: SPIFFEBundleError.self) { try SPIFFEBundle.load(contentsOf: dir + "/missing.pem") }
    }
}

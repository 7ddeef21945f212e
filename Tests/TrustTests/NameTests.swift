import Foundation
import SwiftASN1
import Testing
import Trust
import TrustLab
import X509

@Suite("Names: canonical peer names, wildcards, name constraints")
struct NameTests {
    /// Pitfall 8: case, trailing dot and IDN spellings of one host are the same peer name; confusables are refused.
    @Test func peerNamesAreCanonicalised() throws {
        #expect(try PeerName(host: "API.Example.COM.") == .dnsName("api.example.com"))
        #expect(try PeerName(host: "bücher.example") == .dnsName("xn--bcher-kva.example"))
        #expect(try PeerName(host: "BÜCHER.example") == .dnsName("xn--bcher-kva.example"))
        #expect(try PeerName(host: "xn--bcher-kva.example") == .dnsName("xn--bcher-kva.example"))
        #expect(try PeerName(host: "ѕрооғ.badssl.com") == .dnsName("xn--n1aae7f7o.badssl.com"))
        #expect(try PeerName(host: "例え.テスト") == .dnsName("xn--r8jz45g.xn--zckzah"))
        #expect(throws: PeerNameError.self) { try PeerName(host: "exa mple.com") }
        #expect(throws: PeerNameError.self) { try PeerName(host: "example..com") }
        #expect(throws: PeerNameError.self) { try PeerName(host: "exam\u{200B}ple.com") }  // zero-width space
        #expect(throws: PeerNameError.self) { try PeerName(host: "example.com\u{2215}evil.com") }  // division slash
        #expect(throws: PeerNameError.self) { try PeerName(host: "") }
    }

    @Test func ipAddressesParseStrictly() {
        #expect(IPAddress("127.0.0.1")?.bytes == [127, 0, 0, 1])
        #expect(IPAddress("[::1]")?.description == "::1")
        #expect(IPAddress("2001:db8::1:0:0:1")?.description == "2001:db8::1:0:0:1")
        #expect(IPAddress("::ffff:192.0.2.1")?.bytes.suffix(4) == [192, 0, 2, 1])
        for bad in ["0x7f.0.0.1", "0177.0.0.1", "127.1", "1.2.3.256", "fe80::1%eth0", "1::2::3", "::g"] {
            #expect(IPAddress(bad) == nil, "\(bad)")
        }
    }

    @Test func wildcardRulesFollowRFC6125() {
        let matcher = HostnameMatcher(publicSuffixes: PublicSuffixList(contents: "com\nco.uk\n*.ck\n!www.ck\n"))
        #expect(matcher.matches(presented: "*.example.com", host: "www.example.com"))
        #expect(matcher.matches(presented: "*.EXAMPLE.com", host: "www.example.com"))
        #expect(!matcher.matches(presented: "*.example.com", host: "example.com"))
        #expect(!matcher.matches(presented: "*.example.com", host: "a.b.example.com"))
        #expect(!matcher.matches(presented: "ba*.example.com", host: "bar.example.com"))
        #expect(!matcher.matches(presented: "*", host: "localhost"))
        #expect(!matcher.matches(presented: "*.com", host: "example.com"))
        #expect(!matcher.matches(presented: "*.co.uk", host: "example.co.uk"))
        #expect(!matcher.matches(presented: "*.foo.ck", host: "x.foo.ck"))
        #expect(!matcher.matches(presented: "www.*.example.com", host: "www.a.example.com"))
        #expect(!matcher.matches(presented: "under_score.example.com", host: "under_score.example.com"))
    }

    /// Pitfall 5: a constraint for example.com never admits a name that merely ends in the same characters.
    @Test func nameConstraintsRespectLabelBoundaries() async throws {
        let constrained = try LabAuthority.root(commonName: "Constrained Root", nameConstraints: NameConstraints(permittedDNSDomains: ["example.com"]))
        func verdict(_ name: String) async throws -> TrustDecision {
            let leaf = try constrained.leaf(dnsNames: [name])
            return await PathValidator(anchors: .only([constrained.certificate])).evaluate(try ServerTrust(presentedChain: leaf.chain, host: name))
        }
        #expect(try await verdict("example.com").isTrusted)
        #expect(try await verdict("www.example.com").isTrusted)
        for evil in ["evil-example.com", "xexample.com", "example.com.evil.com"] {
            #expect(try await verdict(evil).codes == ["name-constraint-violation"], "\(evil)")
        }
    }

    /// CVE-2025-61727: a wildcard that could stand for an excluded name is refused.
    @Test func wildcardCannotSlipPastAnExcludedSubtree() async throws {
        let constrained = try LabAuthority.root(commonName: "Excluding Root", nameConstraints: NameConstraints(excludedDNSDomains: ["bar.example.com"]))
        let leaf = try constrained.leaf(dnsNames: ["*.example.com"])
        let decision = await PathValidator(anchors: .only([constrained.certificate])).evaluate(try ServerTrust(presentedChain: leaf.chain, host: "foo.example.com"))
        #expect(decision.codes == ["name-constraint-violation"])
    }
}

@Suite("Wildcards on public suffixes (system Public Suffix List)")
struct PublicSuffixWildcardTests {
    @Test func defaultPolicyRefusesAWildcardOnAPublicSuffix() async throws {
        guard PublicSuffixList.system() != nil else {
            Issue.record("the system Public Suffix List is missing (Debian package publicsuffix); .ci/run installs it")
            return
        }
        let root = try LabAuthority.root(commonName: "PSL Root")
        let leaf = try root.leaf(dnsNames: ["*.co.uk"])
        let decision = await PathValidator(anchors: .only([root.certificate])).evaluate(try ServerTrust(presentedChain: leaf.chain, host: "example.co.uk"))
        #expect(decision.codes == ["name-mismatch"])
        let fine = try root.leaf(dnsNames: ["*.example.co.uk"])
        #expect(await PathValidator(anchors: .only([root.certificate])).evaluate(try ServerTrust(presentedChain: fine.chain, host: "www.example.co.uk")).isTrusted)
    }
}

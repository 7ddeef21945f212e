import Foundation
import Testing

@testable import TrustHTTP

/// A URL's origin, its host canonical by the package's own UTS #46 mapping: the same whichever Foundation is linked
/// (`URL` maps a Unicode host to A-labels only with full Foundation; the `trust` tool links FoundationEssentials only).
@Suite("Origin: canonical hosts whatever URL made of them")
struct OriginTests {
    @Test("Unicode, fullwidth, upper-case and A-label spellings name one origin; a trailing dot is kept")
    func canonicalHosts() throws {
        let cases: [(String, String)] = [
            ("ＧＯＯＤ．lab．test", "good.lab.test"), ("straße.good.lab.test", "xn--strae-oqa.good.lab.test"),
            ("XN--STRAE-OQA.good.lab.test", "xn--strae-oqa.good.lab.test"), ("Good.Lab.Test.", "good.lab.test."),
            ("127.0.0.1", "127.0.0.1"), ("::1", "::1"), ("2001:DB8::1", "2001:db8::1"), ("[127.0.0.1]", "127.0.0.1"),
            ("255.255.255.255", "255.255.255.255"), ("0177.0.0.1", "0177.0.0.1"), ("::FFFF:192.0.2.1", "::ffff:c000:201"),
        ]
        for (typed, canonical) in cases {
            // Both what full Foundation's URL gives (the host already mapped) and what URL gives with
            // FoundationEssentials alone (the host as typed) make the same origin.
            #expect(Origin.canonical(typed) == canonical, "\(typed)")
        }
        let url = try #require(URL(string: "https://[2001:DB8::1]:8443/"))
        #expect(Origin(url).map { "\($0.host) \($0.port)" } == "2001:db8::1 8443")
    }

    @Test("A host that is not a name is refused, with the rule it breaks")
    func refusedHosts() throws {
        for text in ["https://a_b%5B/", "https://%E2%98%83.lab.test/", "https://%CC%81a.lab.test/"] {
            let url = try #require(URL(string: text))
            #expect(Origin.nameProblem(url) != nil, "\(text)")
        }
        #expect(Origin.nameProblem(try #require(URL(string: "https://good.lab.test/"))) == nil)
        #expect(Origin.nameProblem(try #require(URL(string: "https://[::1]/"))) == nil)
    }
}

import Foundation
import Testing
import Trust

/// SPIFFE IDs as SPIFFE-ID.md §2 defines them, and the matchers that allow them.
@Suite("SPIFFE IDs: parsing (SPIFFE-ID §2) and matchers")
struct SPIFFEIDTests {
    static let valid: [(text: String, trustDomain: String, path: String)] = [
        ("spiffe://example.org", "example.org", ""),
        ("spiffe://example.org/ns/prod/sa/web", "example.org", "/ns/prod/sa/web"),
        ("spiffe://a_b-c.d9/x.y-z_W/A", "a_b-c.d9", "/x.y-z_W/A"),
        ("spiffe://10.0.0.1/workload", "10.0.0.1", "/workload"),
        ("spiffe://example.org/...", "example.org", "/..."),
        ("spiffe://" + String(repeating: "t", count: 255) + "/p", String(repeating: "t", count: 255), "/p"),
        ("spiffe://example.org/" + String(repeating: "p", count: 2048 - 21), "example.org", "/" + String(repeating: "p", count: 2048 - 21)),
    ]

    static let invalid: [(text: String, code: String)] = [
        ("", "empty"),
        ("http://example.org/a", "wrong-scheme"),
        ("SPIFFE://example.org/a", "wrong-scheme"),
        ("spiffe:/example.org/a", "wrong-scheme"),
        ("example.org/a", "wrong-scheme"),
        ("spiffe://", "missing-trust-domain"),
        ("spiffe:///a", "missing-trust-domain"),
        ("spiffe://Example.org/a", "invalid-trust-domain-character"),
        ("spiffe://exa mple.org/a", "invalid-trust-domain-character"),
        ("spiffe://bücher.example/a", "invalid-trust-domain-character"),
        ("spiffe://example.org:8443/a", "port-or-userinfo"),
        ("spiffe://example.org:/a", "port-or-userinfo"),
        ("spiffe://user@example.org/a", "port-or-userinfo"),
        ("spiffe://example.org/a?x=1", "query-or-fragment"),
        ("spiffe://example.org/a#frag", "query-or-fragment"),
        ("spiffe://example.org?x", "query-or-fragment"),
        ("spiffe://example.org/", "trailing-slash"),
        ("spiffe://example.org/a/", "trailing-slash"),
        ("spiffe://example.org//a", "empty-path-segment"),
        ("spiffe://example.org/a//b", "empty-path-segment"),
        ("spiffe://example.org/./a", "dot-path-segment"),
        ("spiffe://example.org/a/..", "dot-path-segment"),
        ("spiffe://example.org/a/../b", "dot-path-segment"),
        ("spiffe://example.org/a%2Fb", "invalid-path-character"),
        ("spiffe://example.org/a b", "invalid-path-character"),
        ("spiffe://example.org/café", "invalid-path-character"),
        ("spiffe://example.org/a*", "invalid-path-character"),
        ("spiffe://" + String(repeating: "t", count: 256) + "/p", "trust-domain-too-long"),
        ("spiffe://example.org/" + String(repeating: "p", count: 2048 - 20), "too-long"),
    ]

    @Test func validIDsParse() throws {
        for (text, trustDomain, path) in Self.valid {
            let id = try SPIFFEID(parsing: text)
            #expect(id.trustDomain.name == trustDomain && id.path == path, "\(text)")
            #expect(id.description == text)
            #expect(try SPIFFEID(parsing: id.description) == id)
        }
    }

    @Test func invalidIDsAreRefusedWithTheirReason() {
        for (text, code) in Self.invalid {
            do {
                let id = try SPIFFEID(parsing: text)
                Issue.record("\(text.prefix(60)) accepted as \(id)")
            } catch {
                #expect(error.code == code, "\(text.prefix(60)): \(error)")
                #expect(!error.description.isEmpty)
            }
        }
    }

    /// The text of a refused ID comes from a certificate: its description shows it escaped, and shortened.
    @Test func refusedIDsAreShownEscaped() {
        let hostile = "spiffe://example.org/a\u{1B}]0;owned\u{07}\r\n\u{202E}b"
        do {
            _ = try SPIFFEID(parsing: hostile)
            Issue.record("accepted")
        } catch {
            #expect(!DisplayText.containsUnsafeCharacter(error.description) && !error.description.contains("\n"), "\(error.description.debugDescription)")
            #expect(error.description.contains("\\x1b"))
        }
        do {
            _ = try SPIFFEID(parsing: "spiffe://example.org/" + String(repeating: "p", count: 1000) + "?")
            Issue.record("accepted")
        } catch {
            #expect(error.description.count < 400, "\(error.description.count)")
        }
    }

    @Test func trustDomainsParseFromNameOrID() throws {
        #expect(try SPIFFETrustDomain(parsing: "example.org").name == "example.org")
        #expect(try SPIFFETrustDomain(parsing: "spiffe://example.org").name == "example.org")
        #expect(try SPIFFETrustDomain(parsing: "example.org").id.description == "spiffe://example.org")
        #expect(throws: SPIFFEIDError.self) { try SPIFFETrustDomain(parsing: "spiffe://example.org/a") }
        #expect(throws: SPIFFEIDError.self) { try SPIFFETrustDomain(parsing: "Example.org") }
        #expect(throws: SPIFFEIDError.self) { try SPIFFETrustDomain(parsing: "") }
    }

    @Test func exactMatcherMatchesOnlyItsID() throws {
        let matcher = try SPIFFEIDMatcher(parsing: "spiffe://example.org/ns/a")
        #expect(matcher == .exact(try SPIFFEID(parsing: "spiffe://example.org/ns/a")))
        #expect(matcher.matches(try SPIFFEID(parsing: "spiffe://example.org/ns/a")))
        for other in [
            "spiffe://example.org/ns/a/b", "spiffe://example.org/ns/ab", "spiffe://example.org/ns", "spiffe://other.org/ns/a", "spiffe://example.org/NS/a",
        ] {
            #expect(!matcher.matches(try SPIFFEID(parsing: other)), "\(other)")
        }
    }

    @Test func trustDomainMatcherMatchesEveryIDOfTheDomainOnly() throws {
        let matcher = try SPIFFEIDMatcher(parsing: "spiffe://example.org")
        #expect(matcher == .trustDomain(try SPIFFETrustDomain(parsing: "example.org")))
        #expect(try SPIFFEIDMatcher(parsing: "spiffe://example.org/*") == matcher)
        #expect(matcher.matches(try SPIFFEID(parsing: "spiffe://example.org/anything/at/all")))
        #expect(!matcher.matches(try SPIFFEID(parsing: "spiffe://example.org.evil/a")))
        #expect(!matcher.matches(try SPIFFEID(parsing: "spiffe://sub.example.org/a")))
    }

    /// A prefix matches whole segments: `/ns/a` matches `/ns/a` and `/ns/a/b`, never `/ns/ab`.
    @Test func pathPrefixMatcherMatchesWholeSegments() throws {
        let matcher = try SPIFFEIDMatcher(parsing: "spiffe://example.org/ns/a/*")
        #expect(matcher == .pathPrefix(try SPIFFEID(parsing: "spiffe://example.org/ns/a")))
        #expect(matcher.description == "spiffe://example.org/ns/a/*")
        for allowed in ["spiffe://example.org/ns/a", "spiffe://example.org/ns/a/b", "spiffe://example.org/ns/a/b/c"] {
            #expect(matcher.matches(try SPIFFEID(parsing: allowed)), "\(allowed)")
        }
        for refused in ["spiffe://example.org/ns/ab", "spiffe://example.org/ns", "spiffe://example.org/ns/a.b", "spiffe://other.org/ns/a/b"] {
            #expect(!matcher.matches(try SPIFFEID(parsing: refused)), "\(refused)")
        }
        #expect(throws: SPIFFEIDError.self) { try SPIFFEIDMatcher(parsing: "spiffe://example.org/ns/*/x") }
        #expect(throws: SPIFFEIDError.self) { try SPIFFEIDMatcher(parsing: "spiffe://example.org/ns//*") }
    }
}

import Foundation
import Testing

@testable import Trust

/// ``URLUserInfo``'s one rule: user-info runs from `://` to the last `@` of the URL-like text, whatever the password
/// holds. The rule it replaced ended the authority at the first `/`, `?` or `#` (RFC 3986's grammar), so a password
/// holding one was printed from that character on.
@Suite("URL user-info redaction")
struct URLUserInfoTests {
    /// Passwords a person may paste: each of `/`, `?`, `#`, `@` and `:` inside, and all of them.
    static let passwords = ["Sl/ashS3cret-88", "Qu?estion-1", "Ha#sh-2", "A@t-3", "Co:lon-4", "Al/l?o#f@th:em-5", "/?#@:"]

    @Test(arguments: passwords) func aSingleURL(password: String) {
        let url = "https://rep:\(password)@report.example.test/r?q=1#f"
        #expect(URLUserInfo.redacted(url) == "https://***@report.example.test/r?q=1#f")
        #expect(URLUserInfo.userInfo(in: url) == "rep:" + password)
        // Without a user name, and without a path.
        #expect(URLUserInfo.redacted("http://:\(password)@proxy.example:3128") == "http://***@proxy.example:3128")
    }

    @Test(arguments: passwords) func urlsQuotedInText(password: String) {
        let text =
            "must be an https URL, not \"http://ruser-9:\(password)@report.example.test/r\"; proxy <http://p:\(password)@proxy:3128/> and 'ftp://u:\(password)@h' too"
        let redacted = URLUserInfo.redactingUserInfo(inText: text)
        #expect(redacted == "must be an https URL, not \"http://***@report.example.test/r\"; proxy <http://***@proxy:3128/> and 'ftp://***@h' too")
        #expect(!redacted.contains(password) && !redacted.contains("ruser-9"))
    }

    @Test func textWithoutUserInfoIsUnchanged() {
        for text in ["https://example.com/path?x=1#y", "no URL here @ all", "https://example.com", "a://", "://@"] {
            #expect(URLUserInfo.redactingUserInfo(inText: text) == (text == "://@" ? "://***@" : text))
        }
        #expect(URLUserInfo.redacted("https://example.com/p") == "https://example.com/p")
        #expect(URLUserInfo.userInfo(in: "https://example.com/p") == nil)
    }

    /// The price of the rule, chosen on purpose: an `@` in a path hides what comes before it.
    @Test func anAtInThePathHidesTheHostToo() {
        #expect(URLUserInfo.redacted("https://social.example/@alice") == "https://***@alice")
    }

    /// Delimiters found by byte: a combining mark after `@` does not hide it.
    @Test func combiningMarkAfterTheAt() {
        #expect(URLUserInfo.redacted("https://u:Sl/ash@\u{301}host/") == "https://***@\u{301}host/")
    }
}

/// Parsed URLs: their own authority decides, so an `@` in a path is left alone, and user-info is hidden whole.
@Suite("URL user-info redaction of parsed URLs")
struct ParsedURLUserInfoTests {
    @Test func parsedURLs() throws {
        let cases: [(String, String)] = [
            ("https://social.example/@alice", "https://social.example/@alice"),
            ("https://h.example/q?mail=a@b.example", "https://h.example/q?mail=a@b.example"),
            ("https://u:p%2Fw%40x@h.example/@me", "https://***@h.example/@me"),
            ("https://user@h.example:8443/", "https://***@h.example:8443/"),
            ("https://h.example", "https://h.example"),
        ]
        for (text, expected) in cases {
            let url = try #require(URL(string: text), "\(text)")
            #expect(URLUserInfo.redacted(url) == expected, "\(text)")
        }
    }

    /// What a caller keeps secret: a parseable URL's own user-info, so an `@` in its path makes no secret of its host.
    @Test func userInfoOfAParseableURLIsItsOwn() {
        #expect(URLUserInfo.userInfo(in: "https://social.example:8443/@alice") == nil)
        #expect(URLUserInfo.userInfo(in: "https://h.example/q?mail=a@b.example") == nil)
        #expect(URLUserInfo.userInfo(in: "https://u:p@h.example/@alice") == "u:p")
        // Unparseable (a raw `/` in the password): the redaction rule's.
        #expect(URLUserInfo.userInfo(in: "https://u:p/w@h.example/") == "u:p/w")
    }

    /// A configuration problem never quotes a password it was given, whatever the password holds.
    @Test(arguments: URLUserInfoTests.passwords) func configurationProblems(password: String) {
        let problem = TrustConfigurationProblem(
            path: "$.hosts[0].reportURIs[0]", message: "must be an https URL, not \"http://r-9:\(password)@reports.example/r\"")
        #expect(problem.message == "must be an https URL, not \"http://***@reports.example/r\"")
        #expect(!problem.description.contains(password))
    }
}

import Testing
import TrustTestSupport

/// The check every hostile-name test relies on (``HostileNames/expectNoRawControl(_:_:lines:sourceLocation:)``)
/// catches what it is for: a raw control, a raw LF alone (which splitting by `Character` never saw: a lone LF
/// ended a line, and a CR LF was one `Character`), a line forged by a name's LF, and a line too many.
@Suite("HostileNames: the raw-control check itself")
struct HostileNamesCheckTests {
    @Test func catchesRawControlsAndLineFeeds() {
        withKnownIssue("ESC") { HostileNames.expectNoRawControl("subject: evil\u{1B}[2J", "a raw ESC") }
        withKnownIssue("CR before LF") { HostileNames.expectNoRawControl("subject: evil\r\nforged", "a raw CR LF") }
        withKnownIssue("forged line") { HostileNames.expectNoRawControl("subject: evil host\nforged: line", "a lone LF") }
        withKnownIssue("two lines") { HostileNames.expectNoRawControl("subject: evil\nmore", "a lone LF", lines: 1) }
        // What is shown escaped passes.
        HostileNames.expectNoRawControl("subject: evil\\x1b[2J\\r\\nforged: line", "escaped", lines: 1)
        HostileNames.expectNoRawControl("line one\nline two\n", "a two-line report", lines: 3)
    }
}

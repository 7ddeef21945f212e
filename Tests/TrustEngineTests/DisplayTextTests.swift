import Foundation
import Testing
import Trust
import TrustTestSupport

/// The one sanitiser for text a peer chose (``DisplayText``): each class of character it escapes, the
/// backslash that keeps the escaped form unambiguous, invalid UTF-8, and text it must leave alone.
@Suite(.paced) struct DisplayTextTests {
    @Test func escapesC0ControlsAndDEL() {
        #expect(DisplayText.escaped("a\u{1B}[2Jb") == "a\\x1b[2Jb")  // ESC: a clear-screen shown, not done
        #expect(DisplayText.escaped("\u{0}") == "\\x00")
        #expect(DisplayText.escaped("\u{7}\u{8}") == "\\x07\\x08")  // BEL, BS
        #expect(DisplayText.escaped("line\r\nforged") == "line\\x0d\\x0aforged")  // CR LF cannot forge a log line
        #expect(DisplayText.escaped("a\tb") == "a\\x09b")  // TAB: escaped (see DisplayText)
        #expect(DisplayText.escaped("\u{7F}") == "\\x7f")
        for value in 0..<0x20 {
            let scalar = Unicode.Scalar(UInt8(value))
            #expect(DisplayText.escaped(String(scalar)) == String(format: "\\x%02x", value))
        }
    }

    /// The last line of defence for whole messages: controls escaped as ``DisplayText/escaped(_:)`` does, but
    /// text that already went through it is left as it is (its backslashes not doubled) and a message keeps its
    /// line feeds.
    @Test func neutralizingControlsLeavesEscapedTextAndLineFeeds() {
        let peer = "CN=evil\u{1B}]0;pwned\u{7}\\x\u{202E}"
        let once = DisplayText.escaped(peer)
        #expect(DisplayText.neutralizingControls(once) == once)
        #expect(DisplayText.neutralizingControls("a: " + peer + "\nb") == "a: CN=evil\\x1b]0;pwned\\x07\\x\\u{202E}\nb")
        #expect(DisplayText.neutralizingControls("plain text, é, 名前") == "plain text, é, 名前")
        for value in (0..<0x20).filter({ $0 != 0x0A }) + [0x7F] {
            let text = DisplayText.neutralizingControls("x" + String(Unicode.Scalar(UInt8(value))) + "y")
            #expect(!DisplayText.containsUnsafeCharacter(text), "\(value)")
        }
    }

    @Test func escapesC1ControlsBidiAndLineSeparators() {
        #expect(DisplayText.escaped("\u{9B}31m") == "\\u{009B}31m")  // C1 CSI
        #expect(DisplayText.escaped("\u{80}\u{85}\u{9F}") == "\\u{0080}\\u{0085}\\u{009F}")
        #expect(DisplayText.escaped("evil\u{202E}gpj.exe") == "evil\\u{202E}gpj.exe")  // RIGHT-TO-LEFT OVERRIDE
        for value: UInt32 in [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C, 0x2028, 0x2029] {
            let scalar = Unicode.Scalar(value)!
            #expect(DisplayText.escaped(String(scalar)) == "\\u{" + String(format: "%04X", value) + "}")
            #expect(DisplayText.needsEscaping(scalar))
        }
    }

    @Test func escapesTheBackslashSoTheFormIsUnambiguous() {
        #expect(DisplayText.escaped("\\") == "\\\\")
        // The four characters `\x1b` and a real ESC come out differently.
        #expect(DisplayText.escaped("\\x1b") == "\\\\x1b")
        #expect(DisplayText.escaped("\u{1B}") == "\\x1b")
        #expect(DisplayText.escaped("CN=a\\,b") == "CN=a\\\\,b")
    }

    @Test func keepsPrintableTextAsItIs() {
        for text in ["", "good.lab.test", "CN=swift-trust lab,O=Example", "é", "Zürich", "名前.example", "日本語のテスト", "👩‍💻", "e\u{301}", "a b ~!@#$%^&*()"] {
            #expect(DisplayText.escaped(text) == text)
            #expect(!DisplayText.containsUnsafeCharacter(text))
        }
        // U+00A0 (first after C1) and U+200D (zero-width joiner, in emoji) are not controls.
        #expect(DisplayText.escaped("\u{A0}\u{200D}") == "\u{A0}\u{200D}")
    }

    @Test func showsInvalidUTF8AsBytes() {
        #expect(DisplayText.escaped(utf8: Array("plain é".utf8)) == "plain é")
        #expect(DisplayText.escaped(utf8: [0x61, 0xFF, 0x62]) == "a\\xffb")
        #expect(DisplayText.escaped(utf8: [0xC3]) == "\\xc3")  // truncated sequence
        #expect(DisplayText.escaped(utf8: [0xC0, 0xAF]) == "\\xc0\\xaf")  // overlong "/"
        #expect(DisplayText.escaped(utf8: [0xED, 0xA0, 0x80]) == "\\xed\\xa0\\x80")  // a surrogate
        #expect(DisplayText.escaped(utf8: [0x1B, 0x5B, 0xC2, 0x9B, 0x5C]) == "\\x1b[\\u{009B}\\\\")
        #expect(DisplayText.escaped(utf8: [UInt8]()) == "")
    }

    @Test func anyInputComesOutWithoutAnUnsafeCharacter() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...24, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let shown = DisplayText.escaped(utf8: bytes)
            #expect(!DisplayText.containsUnsafeCharacter(shown), "\(bytes)")
            let scalars = String(decoding: bytes, as: UTF8.self)
            #expect(!DisplayText.containsUnsafeCharacter(DisplayText.escaped(scalars)), "\(bytes)")
        }
    }

    @Test func interpolationEscapesValuesNotLiterals() {
        let subject = "CN=\u{1B}]0;owned\u{7}"
        let line = DisplayText("expired: \(subject)\n")
        #expect(line.description == "expired: CN=\\x1b]0;owned\\x07\n")
        let reasonText = DisplayText.escaped(subject)
        #expect(DisplayText("  - \(escaped: reasonText)").description == "  - CN=\\x1b]0;owned\\x07")
        #expect(DisplayText("\(line)").description == line.description)  // display text is not escaped twice
    }

    @Test func reasonDescriptionsEscapeNames() {
        let hostile = "evil\u{1B}[31m\u{202E}\r\nx"
        let reasons: [TrustFailureReason] = [
            .expired(subject: hostile, notAfter: Date(timeIntervalSince1970: 0), at: Date(timeIntervalSince1970: 86_400)),
            .nameMismatch(expected: "good.lab.test", presented: [hostile, "ok.example"]),
            .noPathToTrustedAnchor(.missingIssuer(issuer: hostile, of: hostile)),
            .revoked(subject: hostile, serialNumber: "01", reason: hostile, revokedAt: Date(timeIntervalSince1970: 0), source: hostile),
        ]
        for reason in reasons {
            #expect(!DisplayText.containsUnsafeCharacter(reason.description), "\(reason.code)")
            #expect(reason.description.contains("evil\\x1b[31m\\u{202E}\\x0d\\x0ax"), "\(reason.code)")
        }
        // The data keeps the name exact.
        if case .expired(let subject, _, _) = reasons[0].detail { #expect(subject == hostile) }
    }
}

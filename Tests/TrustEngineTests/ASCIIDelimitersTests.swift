import Testing
import Trust
import TrustTestSupport

/// Delimiters found by byte, where `Character` comparison would not see them.
@Suite(.paced) struct ASCIIDelimitersTests {
    let colon = UInt8(ascii: ":")
    let mark = "\u{301}"  // COMBINING ACUTE ACCENT: joins the character before it

    @Test func findsADelimiterThatACombiningMarkFollows() {
        let text = "user:" + mark + "secret@" + mark + "host"
        #expect(!text.contains(":"))  // what Character comparison sees
        #expect(text.containsASCII(colon))
        let split = text.splitOnce(atASCII: colon)
        #expect(split.map { String($0.before) } == "user")
        #expect(split.map { String($0.after) } == mark + "secret@" + mark + "host")
        let at = text.lastIndex(ofASCII: UInt8(ascii: "@"))
        #expect(at.map { String(text[..<$0]) } == "user:" + mark + "secret")
        #expect(text.firstIndex(ofASCII: UInt8(ascii: "#")) == nil)
        #expect("no delimiter".splitOnce(atASCII: colon) == nil)
    }

    @Test func splitsKeepingEmptyPieces() {
        let pieces = ("a,," + mark + "b,").split(atASCII: UInt8(ascii: ","))
        #expect(pieces.map(String.init) == ["a", "", mark + "b", ""])
        #expect("".split(atASCII: UInt8(ascii: ",")).map(String.init) == [""])
        #expect("é,ü".split(atASCII: UInt8(ascii: ",")).map(String.init) == ["é", "ü"])
        // Works on substrings too, with their own bounds.
        let sub = "x:a,b:y".dropFirst(2).dropLast(2)
        #expect(sub.split(atASCII: UInt8(ascii: ",")).map(String.init) == ["a", "b"])
    }
}

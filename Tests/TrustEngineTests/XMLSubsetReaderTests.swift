import Testing

@testable import TrustConfigurationImport

/// The strict XML reader behind `trust import android-nsc`: what it hands on is what the document says, and the first
/// thing that is not well-formed (XML 1.0 §2.1) ends the read with its line.
@Suite("XML subset reader: elements, attributes, text, references, CDATA, comments; nothing recovered")
struct XMLSubsetReaderTests {
    typealias Event = XMLSubsetReader.Event

    func events(_ text: String) throws(XMLSubsetReader.SyntaxError) -> [Event] {
        try XMLSubsetReader.events(Array(text.utf8))
    }

    @Test("A document's elements, attributes and text, in order")
    func wellFormed() throws {
        let document = """
            \u{FEFF}<?xml version="1.0" encoding="utf-8"?>
            <!-- a comment -->
            <network-security-config xmlns:tools="http://schemas.android.com/tools">
              <domain-config cleartextTrafficPermitted='false' tools:ignore="x">
                <domain includeSubdomains="true">example.com</domain>
                <pin digest="SHA-256">&lt;a&amp;b&gt;&#65;&#x42;&apos;&quot;<![CDATA[<raw & text>]]></pin>
                <trust-anchors/>
              </domain-config>
            </network-security-config>
            <!-- after -->
            """
        let read = try events(document)
        #expect(
            read.filter { if case .text(let text) = $0 { return !text.allSatisfy(\.isWhitespace) } else { return true } } == [
                .start("network-security-config", ["xmlns:tools": "http://schemas.android.com/tools"]),
                .start("domain-config", ["cleartextTrafficPermitted": "false", "tools:ignore": "x"]),
                .start("domain", ["includeSubdomains": "true"]), .text("example.com"), .end("domain"),
                .start("pin", ["digest": "SHA-256"]), .text("<a&b>AB'\""), .text("<raw & text>"), .end("pin"),
                .start("trust-anchors", [:]), .end("trust-anchors"),
                .end("domain-config"), .end("network-security-config"),
            ])
    }

    @Test("Line ends become LF in text (§2.11); tab, CR and LF become spaces in attribute values (§3.3.3)")
    func normalisation() throws {
        #expect(try events("<a b=\"x\ty\r\nz\rw\">1\r\n2\r3</a>") == [.start("a", ["b": "x y z w"]), .text("1\n2\n3"), .end("a")])
        #expect(try events("<a>\u{E9}\u{1F600}</a>") == [.start("a", [:]), .text("\u{E9}\u{1F600}"), .end("a")])
        #expect(try events("<\u{E9}l\u{E9}ment/>") == [.start("\u{E9}l\u{E9}ment", [:]), .end("\u{E9}l\u{E9}ment")])
    }

    @Test(
        "What is not well-formed is refused, with its line",
        arguments: [
            ("", "no root element"),
            ("text", "no root element"),
            ("<a>", "the document ends inside <a>"),
            ("<a></b>", "the end tag </b> does not close <a>"),
            ("<a><b></a></b>", "the end tag </a> does not close <b>"),
            ("<a/><b/>", "content after the root element"),
            ("<a/>text", "content after the root element"),
            ("<a x=\"1\" x=\"2\"/>", "the attribute x is given twice"),
            ("<a x=1/>", "an attribute value without quotes"),
            ("<a x=\"1/>", "an attribute value without its closing quote"),
            ("<a x=\"<\"/>", "a < in an attribute value"),
            ("<a x=\"1\"y=\"2\"/>", "a malformed start tag"),
            ("<a>&nbsp;</a>", "the undeclared entity &nbsp;"),
            ("<a>&amp</a>", "an & that starts no reference"),
            ("<a>&#0;</a>", "the character reference &#0; names no XML character"),
            ("<a>&#xD800;</a>", "the character reference &#xD800; names no XML character"),
            ("<a>&#x110000;</a>", "the character reference &#x110000; names no XML character"),
            ("<a>&#12a;</a>", "the character reference &#12a; names no XML character"),
            ("<a>]]></a>", "]]> in character data"),
            ("<a><!-- a -- b --></a>", "-- inside a comment"),
            ("<a><!-- open</a>", "a comment without its end"),
            ("<a><![CDATA[ open</a>", "a CDATA section without its end"),
            ("<a>\u{1}</a>", "the control character U+01, not allowed in XML"),
            ("<a>\u{FFFE}</a>", "U+FFFE, not allowed in XML"),
            ("<1a/>", "no root element"),
            ("<a><1b/></a>", "a name was expected"),
            ("<a\n\n/ >", "a malformed start tag"),
        ])
    func refusals(_ document: String, _ message: String) {
        #expect(throws: XMLSubsetReader.SyntaxError.self) { try events(document) }
        do {
            _ = try events(document)
        } catch {
            #expect(error.message == message, "\(document)")
        }
    }

    @Test("The line of a refusal is where the reader stopped")
    func lines() {
        #expect(throws: XMLSubsetReader.SyntaxError(line: 3, message: "the undeclared entity &x;")) { try events("<a>\n\n&x;</a>") }
    }

    @Test("Nesting is bounded: 64 levels read, 65 refused, a million refused without recursion")
    func depth() throws {
        func nested(_ depth: Int) -> String { String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth) }
        #expect(try events(nested(64)).count == 128)
        #expect(throws: XMLSubsetReader.SyntaxError.self) { try events(nested(65)) }
        #expect(throws: XMLSubsetReader.SyntaxError.self) { try events(String(repeating: "<a>", count: 1_000_000)) }
    }
}

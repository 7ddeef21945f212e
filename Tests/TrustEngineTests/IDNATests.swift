import Foundation
import Testing
import TrustTestSupport

@testable import Trust

/// Internationalised host names: UTS #46 mapping, IDNA2008 validity, Punycode — one canonical name per
/// host however it is spelled, and a reason for every refusal.
@Suite("IDNA: host names as URL parsers see them", .paced)
struct IDNATests {
    @Test func spellingsOfOneHostAreOneName() throws {
        let same: [(String, String)] = [
            ("ＥＸＡＭＰＬＥ．com", "example.com"),  // fullwidth letters and dot
            ("ｅｘａｍｐｌｅ。ｃｏｍ", "example.com"),  // ideographic full stop
            ("example｡com", "example.com"),  // halfwidth ideographic full stop
            ("ﬁle.com", "file.com"),  // a ligature is its letters
            ("ℌello.com", "hello.com"),
            ("exam\u{00AD}ple.com", "example.com"),  // soft hyphen: ignored (UTS #46 §5)
            ("exam\u{200B}ple.com", "example.com"),  // zero-width space: ignored
            ("faß.de", "xn--fa-hia.de"),  // ß kept (nontransitional processing)
            ("FASS.de", "fass.de"),
            ("XN--FA-HIA.de", "xn--fa-hia.de"),
            ("βόλος.com", "xn--nxasmm1c.com"),
            ("ΒΌΛΟΣ.com", "xn--nxasmq6b.com"),  // Σ maps to σ, not ς
            ("bu\u{0308}cher.de", "xn--bcher-kva.de"),  // NFC
            ("例え.jp。", "xn--r8jz45g.jp"),  // a trailing ideographic full stop is a trailing dot
            ("l·l.cat", "xn--ll-0ea.cat"),  // CONTEXTO: middle dot between two l
            ("क्\u{200D}ष.in", "xn--11b2ezcw70k.in"),  // CONTEXTJ: ZWJ after a virama
            ("ﾃｽﾄ.jp", "xn--zckzah.jp"),  // halfwidth katakana
        ]
        for (spelling, canonical) in same {
            #expect(try PeerName.canonicalDNSName(spelling) == canonical, "\(spelling)")
        }
    }

    @Test func refusalsSayWhichRuleIsBroken() {
        let refused: [(String, String)] = [
            ("☃.net", "U+2603 SNOWMAN"),  // a symbol: DISALLOWED in IDNA2008
            ("a\u{200C}b.com", "ZERO WIDTH NON-JOINER"),  // a joiner out of context
            ("ab·c.cat", "MIDDLE DOT"),
            ("١٢٣.com", "rule 1"),  // Arabic-Indic digits cannot start a right-to-left label
            ("a١.com", "rule 5"),
            ("\u{0301}a.com", "combining mark"),
            ("xn--abc.com", "decodes to"),
            ("xn--a.com", "decodes to U+0080"),
            ("xn--.com", "Punycode"),
            ("xn--ls8h-.com", "Punycode"),
            ("ab--ü.com", "third and fourth"),
            ("-ü.com", "hyphen"),
            ("example.com。.", "empty label"),
            (String(repeating: "ü", count: 60) + ".com", "longer than 63"),
            ("a\u{2215}b.com", "U+2215 DIVISION SLASH"),
        ]
        for (name, words) in refused {
            do {
                let canonical = try PeerName.canonicalDNSName(name)
                Issue.record("\(name) was accepted as \(canonical)")
            } catch {
                #expect(error.description.contains(words), "\(name): \(error.description)")
            }
        }
    }

    /// Decoding goes through the same canonicalisation as parsing: no way to build a non-canonical name.
    @Test func decodedPeerNamesAreCanonical() throws {
        let decoded = try JSONDecoder().decode([PeerName].self, from: Data(#"["EXAMPLE.com.", "ＥＸＡＭＰＬＥ．com", "[::1]", "127.0.0.1"]"#.utf8))
        #expect(decoded.map(\.description) == ["example.com", "example.com", "::1", "127.0.0.1"])
        #expect(String(decoding: try JSONEncoder().encode(decoded), as: UTF8.self) == #"["example.com","example.com","::1","127.0.0.1"]"#)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PeerName.self, from: Data(#""exa mple.com""#.utf8)) }
    }

    @Test func punycodeDecodesWhatItEncodes() {
        for label in ["bücher", "例え", "ñandú", "ÿ", "αβγ", "ὀδυσσεύς", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢"] {
            let encoded = Punycode.encode(label)
            #expect(encoded.flatMap { Punycode.decode(Array($0.utf8)) }.map { String(String.UnicodeScalarView($0)) } == label, "\(label)")
        }
        for bad in ["", "9999999999a", "a!", "ü", "99999999999999999999"] {
            #expect(Punycode.decode(Array(bad.utf8)).map { $0.isEmpty } ?? true, "\(bad)")
        }
    }

    /// Python's `idna` package (`idna.encode(name, uts46=True)`), the implementation curl's and browsers'
    /// behaviour is usually checked against, answers the same for thousands of seeded names: fullwidth,
    /// compatibility and deviation characters, joiners, right-to-left labels, `xn--` labels…
    /// (Scripts/idna-oracle-cases.py says which cases are not applicable and why.)
    @Test func agreesWithPythonIDNA() async throws {
        let seed = ProcessInfo.processInfo.environment["TRUST_IDNA_SEED"].flatMap(Int.init) ?? 20_261_124
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Scripts/idna-oracle-cases.py").path
        let (status, out, err) = try await run("/usr/bin/env", ["python3", script, String(seed), "3000"], timeLimitSeconds: 120)
        guard status == 0 else {
            print("IDNA oracle skipped: python3 with the idna package is needed (pip install idna==3.13): \(err.prefix(300))")
            return
        }
        struct Oracle: Decodable {
            var idna: String
            var uts46: String
            var unicodedata: String
            var cases: [[String?]]
        }
        let oracle = try JSONDecoder().decode(Oracle.self, from: Data(out.utf8))
        guard oracle.uts46 == IDNATables.idnaUnicodeVersion else {
            print(
                "IDNA oracle skipped: idna \(oracle.idna) carries UTS #46 \(oracle.uts46), the embedded tables \(IDNATables.idnaUnicodeVersion) (pip install idna==3.13)"
            )
            return
        }
        var disagreements: [String] = []
        var refusals = 0
        for row in oracle.cases {
            guard row.count == 3, let name = row[0] else { continue }
            let expected = row[1]
            var ours: String?
            do {
                ours = try PeerName.canonicalDNSName(name)
            } catch {
                refusals += 1
                #expect(!error.description.isEmpty)
            }
            if ours != expected {
                let scalars = name.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: " ")
                disagreements.append("\(row[2] ?? "") \(name) [\(scalars)]: idna \(expected ?? "refuses"), ours \(ours ?? "refuses")")
            }
        }
        print(
            "IDNA oracle: seed \(seed), idna \(oracle.idna) (UTS #46 \(oracle.uts46), unicodedata \(oracle.unicodedata)): \(oracle.cases.count) names, \(refusals) refused, \(disagreements.count) disagreements"
        )
        #expect(oracle.cases.count >= 1000)
        #expect(disagreements.isEmpty, "\(disagreements.prefix(25).joined(separator: "\n"))")
    }
}

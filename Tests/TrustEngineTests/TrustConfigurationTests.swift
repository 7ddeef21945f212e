import Foundation
import Testing
import Trust
import TrustLabPKI
import TrustTestSupport

@Suite("Trust configuration: host patterns, strict validation", .paced)
struct TrustConfigurationTests {
    /// Every syntax × hosts, bare apex included, label boundaries, spellings.
    @Test func hostPatternTable() throws {
        let hosts = [
            "example.com", "www.example.com", "a.b.example.com", "evil-example.com", "example.com.evil.com", "xexample.com",
            "WWW.EXAMPLE.COM", "www.example.com.", "bücher.example.com", "xn--bcher-kva.example.com", "com", "127.0.0.1",
        ]
        let table: [(String, [String])] = [
            ("example.com", ["example.com"]),
            ("*.example.com", ["www.example.com", "WWW.EXAMPLE.COM", "www.example.com.", "bücher.example.com", "xn--bcher-kva.example.com"]),
            (
                "**.example.com",
                ["example.com", "www.example.com", "a.b.example.com", "WWW.EXAMPLE.COM", "www.example.com.", "bücher.example.com", "xn--bcher-kva.example.com"]
            ),
            ("EXAMPLE.com.", ["example.com"]),
            ("bücher.example.com", ["bücher.example.com", "xn--bcher-kva.example.com"]),
            ("127.0.0.1", ["127.0.0.1"]),
        ]
        for (text, expected) in table {
            let pattern = try HostPattern(text)
            #expect(hosts.filter { pattern.matches($0) } == expected, "\(text)")
        }
        for bad in ["w*.example.com", "*example.com", "ex*ample.com", "*.*.example.com", "*.127.0.0.1", "**.", "exa mple.com", ""] {
            #expect(throws: HostPattern.Problem.self, "\(bad)") { try HostPattern(bad) }
        }
    }

    /// Every problem at once, with its JSON path.
    /// A pattern is Codable as its text, checked as the file's patterns are: a user's settings can hold one.
    @Test func hostPatternIsCodableAsItsText() throws {
        struct Settings: Codable, Equatable { var hosts: [HostPattern] }
        let settings = Settings(hosts: [try HostPattern("API.Example.com."), try HostPattern("**.example.org")])
        let json = try JSONEncoder().encode(settings)
        #expect(String(decoding: json, as: UTF8.self) == #"{"hosts":["api.example.com","**.example.org"]}"#)
        #expect(try JSONDecoder().decode(Settings.self, from: json) == settings)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Settings.self, from: Data(#"{"hosts":["**.co.uk.."]}"#.utf8)) }
    }

    @Test func validationReportsEveryProblemWithItsPath() throws {
        let pin = Lab.pki.root.certificate.spkiPin.description
        let text = """
            {"version": 1,
             "base": {"allowSHA1": false, "colour": "blue"},
             "hosts": [
               {"host": "**.co.uk"},
               {"host": "api.example.com", "pins": {"sha256": ["\(pin)"]}},
               {"host": "api.example.com"},
               {"host": "b.example.com", "pins": {"sha256": []}},
               {"host": "c.example.com", "pins": {"sha256": ["sha256/short", "md5/abc"]}},
               {"host": "d.example.com", "mode": "enforced", "minimumRSABits": 1024, "reportURIs": ["http://x.test/r"]},
               {"host": "e.example.com", "pins": {"sha256": ["\(pin)"], "allowSinglePin": "yes"}},
               {"host": "f.example.com", "anchors": {"replaceSystem": true}, "exclude": ["other.test"]},
               {"pins": {}}
             ]}
            """
        do {
            _ = try TrustConfiguration.parse(text, publicSuffixes: PublicSuffixList(contents: "com\nuk\nco.uk\n"))
            Issue.record("accepted")
        } catch {
            let paths = error.problems.map(\.path)
            for expected in [
                "$.base.colour", "$.hosts[0].host", "$.hosts[1].pins.sha256", "$.hosts[2].host", "$.hosts[3].pins.sha256",
                "$.hosts[4].pins.sha256[0]", "$.hosts[4].pins.sha256[1]", "$.hosts[5].mode", "$.hosts[5].minimumRSABits",
                "$.hosts[5].reportURIs[0]", "$.hosts[6].pins.allowSinglePin", "$.hosts[7].anchors.replaceSystem", "$.hosts[7].exclude[0]",
                "$.hosts[8].host",
            ] {
                #expect(paths.contains(expected), "\(expected) missing from \(error.description)")
            }
            #expect(error.problems.allSatisfy { !$0.message.isEmpty })
        }
    }

    /// A file of mistakes is listed up to a limit, then counted.
    @Test func problemsAreListedUpToALimit() {
        let members = (0..<1_500).map { #""m\#($0)": 0"# }.joined(separator: ", ")
        do {
            _ = try TrustConfiguration.parse(#"{"version": 1, "base": {\#(members)}}"#, publicSuffixes: nil)
            Issue.record("accepted")
        } catch {
            #expect(error.problems.count == 1_001)
            #expect(error.problems.last?.path == "$" && error.problems.last?.message == "500 more problems not listed")
        }
    }

    /// Explicit true and false are read as written; numbers and strings are not booleans.
    @Test func booleansRoundTripExactly() throws {
        let psl = PublicSuffixList(contents: "com\n")
        let pin = Lab.pki.root.certificate.spkiPin.description
        for flag in [true, false] {
            let text = """
                {"version": 1, "hosts": [{"host": "a.example.com", "pins": {"sha256": ["\(pin)"], "allowSinglePin": \(flag)}, "mode": "report-only",
                 "anchors": {"pem": [], "certificates": ["x.pem"], "replaceSystem": \(flag)}}]}
                """
            let configuration = try TrustConfiguration.parse(text, publicSuffixes: psl)
            #expect(configuration.hosts[0].pins?.allowSinglePin == flag)
            #expect(configuration.hosts[0].anchors?.replaceSystem == flag)
        }
        for wrong in ["1", "0", "\"true\"", "\"NO\"", "null"] {
            let text = #"{"version": 1, "hosts": [{"host": "a.example.com", "anchors": {"certificates": ["x.pem"], "replaceSystem": \#(wrong)}}]}"#
            #expect(throws: TrustConfigurationFileError.self, "\(wrong)") { try TrustConfiguration.parse(text, publicSuffixes: psl) }
        }
        // Duplicate members are refused, not resolved silently either way.
        #expect(throws: TrustConfigurationFileError.self) {
            try TrustConfiguration.parse(#"{"version": 1, "base": {"mode": "enforce", "mode": "report-only"}}"#, publicSuffixes: psl)
        }
    }

    @Test func strictJSON() {
        for bad in [
            "", "{", #"{"a": 01}"#, #"{"a": 1,}"#, "[1 2]", #"{"a": "\x"}"#, "{\"a\": \"\u{1}\"}", #"{"a": "\ud800"}"#, "nul", "{} {}",
            String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
        ] {
            #expect(throws: JSONValue.SyntaxError.self, "\(bad)") { try JSONValue.parse(bad) }
        }
        #expect(
            (try? JSONValue.parse(#"{"a": [true, false, null, -1.5e3, "\u00e9\ud83d\ude00"]}"#))
                == .object([
                    .init(key: "a", value: .array([.bool(true), .bool(false), .null, .number("-1.5e3"), .string("é😀")]))
                ]))
    }

    /// A refused report URI is quoted in its problem without its user-info (RFC 3986 §3.2.1), so that no command
    /// or program that prints the problems shows a password.
    @Test func aRefusedReportURIIsQuotedWithoutItsPassword() {
        do {
            _ = try TrustConfiguration.parse(#"{"version": 1, "base": {"reportURIs": ["http://alice:Rep0rtSecret@reports.example/x"]}}"#, publicSuffixes: nil)
            Issue.record("an http report URI was accepted")
        } catch {
            #expect(error.problems.count == 1)
            #expect(!error.description.contains("Rep0rtSecret") && !error.description.contains("alice"), "\(error)")
            #expect(error.description.contains("http://***@reports.example/x"), "\(error)")
        }
    }

    @Test func missingPublicSuffixListIsAClearProblem() {
        do {
            _ = try TrustConfiguration.parse(#"{"version": 1, "hosts": [{"host": "*.example.com"}]}"#, publicSuffixes: nil)
            Issue.record("accepted without a Public Suffix List")
        } catch {
            #expect(error.description.contains("Public Suffix List"))
        }
        #expect(throws: Never.self) { try TrustConfiguration.parse(#"{"version": 1, "hosts": [{"host": "example.com"}]}"#, publicSuffixes: nil) }
    }
}

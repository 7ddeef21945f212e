import Foundation
import Testing
import Trust
import TrustConfigurationImport
import TrustLabPKI
import TrustTestSupport

@Suite("Importers: TrustKit, Android NSC, ATS, OkHttp", .paced)
struct TrustConfigurationImporterTests {
    static let pinA = "sha256/" + Data(repeating: 0xA1, count: 32).base64EncodedString()
    static let pinB = "sha256/" + Data(repeating: 0xB2, count: 32).base64EncodedString()
    static let bareA = Data(repeating: 0xA1, count: 32).base64EncodedString()
    static let bareB = Data(repeating: 0xB2, count: 32).base64EncodedString()

    /// Import, write our format, read it back: the same configuration.
    func roundTrip(_ text: String, _ source: TrustConfigurationImporter.Source) throws -> TrustConfigurationImporter.Result {
        let result = try TrustConfigurationImporter.convert(Data(text.utf8), from: source)
        let reread = try TrustConfiguration.parse(result.configuration.jsonText(), publicSuffixes: PublicSuffixList(contents: "com\norg\n"))
        #expect(reread == result.configuration, "\(source): \(result.configuration.jsonText())")
        return result
    }

    @Test func trustKitInfoPlist() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict>
              <key>TSKConfiguration</key><dict>
                <key>TSKSwizzleNetworkDelegates</key><false/>
                <key>TSKPinnedDomains</key><dict>
                  <key>example.com</key><dict>
                    <key>TSKIncludeSubdomains</key><true/>
                    <key>TSKEnforcePinning</key><false/>
                    <key>TSKExpirationDate</key><string>2030-06-01</string>
                    <key>TSKPublicKeyHashes</key><array><string>\(Self.bareA)</string><string>\(Self.bareB)</string></array>
                    <key>TSKReportUris</key><array><string>https://report.example.net/log</string><string>http://insecure.example.net/</string></array>
                  </dict>
                  <key>api.example.org</key><dict>
                    <key>TSKEnforcePinning</key><true/>
                    <key>TSKPublicKeyHashes</key><array><string>\(Self.bareA)</string><string>not-base64!</string><string>\(Self.bareB)</string></array>
                  </dict>
                </dict>
              </dict>
            </dict></plist>
            """
        let result = try roundTrip(plist, .trustkit)
        let hosts = result.configuration.hosts
        #expect(hosts.map(\.host?.description) == ["api.example.org", "**.example.com"])
        #expect(hosts[1].mode == .reportOnly && hosts[0].mode == .enforce)
        #expect(hosts[1].pins?.expires == RFC3339.parse("2030-06-01T00:00:00Z"))
        #expect(hosts[1].reportURIs.map(\.absoluteString) == ["https://report.example.net/log"])
        #expect(hosts[0].pins?.sha256.count == 2)
        #expect(result.notes.contains { $0.contains("not-base64!") } && result.notes.contains { $0.contains("http://insecure") })
        // The JSON-dictionary form too.
        let json = #"{"TSKPinnedDomains": {"example.com": {"TSKPublicKeyHashes": ["\#(Self.bareA)", "\#(Self.bareB)"]}}}"#
        #expect(try roundTrip(json, .trustkit).configuration.hosts.first?.host?.description == "example.com")
    }

    @Test func androidNetworkSecurityConfig() throws {
        let xml = """
            <?xml version="1.0" encoding="utf-8"?>
            <network-security-config>
                <base-config cleartextTrafficPermitted="false">
                    <trust-anchors><certificates src="system" /></trust-anchors>
                </base-config>
                <domain-config>
                    <domain includeSubdomains="true">example.com</domain>
                    <domain includeSubdomains="false">static.example.org</domain>
                    <pin-set expiration="2031-01-01">
                        <pin digest="SHA-256">\(Self.bareA)</pin>
                        <pin digest="SHA-256">\(Self.bareB)</pin>
                    </pin-set>
                    <trust-anchors><certificates src="@raw/my_ca" /></trust-anchors>
                </domain-config>
                <debug-overrides>
                    <trust-anchors><certificates src="@raw/charles" overridePins="true" /><certificates src="user" /></trust-anchors>
                </debug-overrides>
            </network-security-config>
            """
        let result = try roundTrip(xml, .androidNSC)
        let configuration = result.configuration
        #expect(configuration.hosts.map(\.host?.description) == ["**.example.com", "static.example.org"])
        #expect(configuration.hosts.allSatisfy { $0.pins?.expires == RFC3339.parse("2031-01-01T00:00:00Z") && $0.pins?.sha256.count == 2 })
        #expect(configuration.hosts[0].anchors == TrustConfiguration.Anchors(certificates: ["res/raw/my_ca"], replaceSystem: true))
        #expect(configuration.base.anchors?.replaceSystem == false)
        #expect(configuration.base.debugOverrides?.overridesPins == true)
        #expect(configuration.base.debugOverrides?.anchors.certificates == ["res/raw/charles"])
        #expect(result.notes.contains { $0.contains("src=\"user\"") })
        // Found by Fuzz/FuzzConfiguration: an expiration before the Gregorian reform (1582) printed proleptic
        // Gregorian but was read back on Foundation's Julian-before-1582 calendar, two days early here.
        let early = xml.replacingOccurrences(of: "2031-01-01", with: "0035-01-01")
        let earlyResult = try roundTrip(early, .androidNSC)
        #expect(earlyResult.configuration.hosts.first?.pins?.expires.map(RFC3339.string) == "0035-01-01T00:00:00.000Z")
        #expect(throws: TrustConfigurationImporter.ImportError.self) { try TrustConfigurationImporter.convert(Data("<not-nsc/>".utf8), from: .androidNSC) }
        #expect(throws: TrustConfigurationImporter.ImportError.self) { try TrustConfigurationImporter.convert(Data("<<<".utf8), from: .androidNSC) }
        // Found by Fuzz/FuzzConfiguration: a name that is not UTF-8 made FoundationXML's XMLParser trap.
        for name in [[0xEF, 0xEF], [0x80], [0xC3]] as [[UInt8]] {
            let element =
                Data("<network-security-config><domain-config><domain include".utf8) + Data(name)
                + Data(#"="true">example.com</domain></domain-config></network-security-config>"#.utf8)
            let tag = Data("<network-security-config><a".utf8) + Data(name) + Data("/></network-security-config>".utf8)
            for xml in [element, tag] {
                let error = #expect(throws: TrustConfigurationImporter.ImportError.self) { try TrustConfigurationImporter.convert(xml, from: .androidNSC) }
                #expect(error?.message == "the Network Security Config is not UTF-8 text")
            }
        }
        // Found by Fuzz/FuzzConfiguration: a processing instruction without data (`<?xml?>` after the start) made
        // FoundationXML read a null pointer. Every processing instruction but the leading declaration is refused.
        let head = #"<?xml version="1.0"?><network-security-config><base-config>"#
        for pi in ["<?xml?>", "<?a?>", "<?php echo 1 ?>", "<?xml version=\"1.0\"?>"] {
            let xml = Data((head + pi + "</base-config></network-security-config>").utf8)
            let error = #expect(throws: TrustConfigurationImporter.ImportError.self) { try TrustConfigurationImporter.convert(xml, from: .androidNSC) }
            #expect(error?.message.hasPrefix("the Network Security Config has a processing instruction at byte \(head.utf8.count) ") == true, "\(pi)")
        }
        #expect(throws: TrustConfigurationImporter.ImportError.self) {
            try TrustConfigurationImporter.convert(Data("<?xml?><network-security-config/>".utf8), from: .androidNSC)
        }
    }

    /// libxml2 runs in recovery mode under FoundationXML, so where it resumes after an error cannot be predicted:
    /// anything from which it could read a processing instruction or a DTD is refused before it parses.
    @Test func androidRefusesWhatLibxml2CouldReadAsAProcessingInstruction() throws {
        func refusal(_ text: [UInt8]) -> String? {
            do {
                _ = try TrustConfigurationImporter.convert(Data(text), from: .androidNSC)
                return nil
            } catch {
                return error.message
            }
        }
        let declarationError =
            "the Network Security Config has an XML declaration that is not `<?xml version=\"1.x\" encoding=\"UTF-8\" standalone=\"yes|no\"?>` (XML 1.0 §2.8)"
        // Found by Fuzz/FuzzConfiguration: libxml2 skips a malformed declaration to its first `>` and then read
        // `<?xmy?>`, which a scan to the declaration's first `?>` had passed over.
        let fuzzed = Data(
            base64Encoded:
                "PD94bWwgdmVyLz4KIDxrZVQ8P3hteT8+VFNLUGlubmVkRW9tYWluc008L2tleT48ZGljdAAAAAAAAAB1dgBleHBpcmF0aW9uPSIyMDMwLTAxLTB0dGVkPSJmYWxzZSI+PHRydXN0LWFuY2hvcnM+Pgo8IUFleQ=="
        )
        #expect(fuzzed != nil)
        #expect(refusal(Array(fuzzed ?? Data())) != nil)
        let body = "<network-security-config/>"
        for declaration in [
            "<?xml ver/>", "<?xml ver/>\n <keT<?xmy?>", "<?xml version='2.0'?>", "<?xml version=\"1.\"?>", "<?xml version=\"1.0\" encoding=\"UTF-7\"?>",
            "<?xml version=\"1.0\" encoding=\"IBM037\"?>", "<?xml version=\"1.0\" encoding=\"US-ASCII\"?>", "<?xml version=\"1.0\" encoding=\"\u{FF35}TF-8\"?>",
            "<?xml version=\"1.0\" standalone=\"maybe\"?>",
            "<?xml version=\"1.0\" standalone=\"yes\" encoding=\"UTF-8\"?>", "<?xml version=\"1.0\"encoding=\"UTF-8\"?>",
            "<?xml version=\"1.0\" ?", "<?xml version=\"1.0",
        ] {
            #expect(refusal(Array((declaration + body).utf8)) == declarationError, "\(declaration)")
        }
        for (text, expected) in [
            ("<!-- <?a?> -->" + body, "has a processing instruction at byte 5"),
            ("<network-security-config><![CDATA[<?b?>]]></network-security-config>", "has a processing instruction at byte 34"),
            (" <?xml version=\"1.0\"?>" + body, "has a processing instruction at byte 1"),
            ("<!DOCTYPE n [<!ENTITY e \"&#60;?a?>\">]><network-security-config>&e;</network-security-config>", "has a DTD or declaration at byte 0"),
            ("<network-security-config><!NOTATION n SYSTEM \"x\"></network-security-config>", "has a DTD or declaration at byte 25"),
        ] {
            #expect(refusal(Array(text.utf8))?.hasPrefix("the Network Security Config " + expected) == true, "\(text)")
        }
        // UTF-16 (libxml2 detects it from `<\0?\0`) cannot be written without NUL bytes.
        #expect(
            refusal(Array("<?xml version=\"1.0\"?>".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
                == "the Network Security Config has a NUL byte at byte 1")
        // What is accepted: a byte order mark, each part of the declaration, single quotes, comments and CDATA.
        for declaration in [
            "", "<?xml version=\"1.0\"?>", "<?xml version='1.1' encoding='utf-8' standalone='no' ?>", "<?xml version=\"1.0\" encoding=\"UTF8\"?>",
            "\u{FEFF}<?xml\tversion = \"1.0\"\r\nencoding=\"UTF-8\"?>",
        ] {
            let text =
                declaration
                + "<network-security-config><!-- a comment --><domain-config><domain>example.com</domain><![CDATA[text]]><pin-set><pin digest=\"SHA-256\">"
                + Self.bareA + "</pin></pin-set></domain-config></network-security-config>"
            let imported = try TrustConfigurationImporter.convert(Data(text.utf8), from: .androidNSC)
            #expect(imported.configuration.hosts.count == 1, "\(declaration)")
        }
    }

    @Test func atsPinnedDomains() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
              <key>NSAppTransportSecurity</key><dict>
                <key>NSPinnedDomains</key><dict>
                  <key>example.org</key><dict>
                    <key>NSIncludesSubdomains</key><true/>
                    <key>NSPinnedCAIdentities</key><array><dict><key>SPKI-SHA256-BASE64</key><string>\(Self.bareA)</string></dict></array>
                    <key>NSPinnedLeafIdentities</key><array><dict><key>SPKI-SHA256-BASE64</key><string>\(Self.bareB)</string></dict></array>
                  </dict>
                  <key>two.example.com</key><dict>
                    <key>NSPinnedCAIdentities</key><array><dict><key>SPKI-SHA256-BASE64</key><string>\(Self.bareA)</string></dict>
                      <dict><key>SPKI-SHA256-BASE64</key><string>\(Self.bareB)</string></dict></array>
                  </dict>
                </dict>
              </dict>
            </dict></plist>
            """
        let result = try roundTrip(plist, .ats)
        let hosts = result.configuration.hosts
        // ATS: the domain plus exactly one more label.
        #expect(hosts.map(\.host?.description) == ["example.org", "*.example.org", "two.example.com"])
        let configuration = result.configuration
        #expect(configuration.entry(for: "www.example.org").host?.description == "*.example.org")
        #expect(configuration.entry(for: "a.b.example.org").host == nil)  // not covered, as in ATS
        #expect(result.notes.contains { $0.contains("merged") })
        // ATS accepts a single pin; ours wants a backup: converted, flagged, and refused by validation until fixed.
        let single = #"{"NSPinnedDomains": {"one.example.com": {"NSPinnedLeafIdentities": [{"SPKI-SHA256-BASE64": "\#(Self.bareA)"}]}}}"#
        let converted = try TrustConfigurationImporter.convert(Data(single.utf8), from: .ats)
        #expect(converted.configuration.hosts.first?.pins?.allowSinglePin == false)
        #expect(converted.notes.contains { $0.contains("single pin") })
        #expect(throws: TrustConfigurationFileError.self) {
            try TrustConfiguration.parse(converted.configuration.jsonText(), publicSuffixes: PublicSuffixList(contents: "com\n"))
        }
        #expect(throws: TrustConfigurationImporter.ImportError.self) {
            try TrustConfigurationImporter.convert(Data(#"{"NSAppTransportSecurity": {"NSAllowsArbitraryLoads": false}}"#.utf8), from: .ats)
        }
    }

    @Test func okHTTPPinLists() throws {
        let kotlin = """
            val certificatePinner = CertificatePinner.Builder()
                .add("*.example.com", "\(Self.pinA)", "\(Self.pinB)")
                .add("**.example.org", "\(Self.pinA)")
                .add("**.example.org", "\(Self.pinB)", "sha1/AAAAAAAAAAAAAAAAAAAAAAAAAAA=")
                .add("exact.example.net", "\(Self.pinA)", "\(Self.pinB)")
                .build()
            """
        let result = try roundTrip(kotlin, .okhttp)
        let configuration = result.configuration
        #expect(configuration.hosts.map(\.host?.description) == ["*.example.com", "**.example.org", "exact.example.net"])
        #expect(configuration.hosts[1].pins?.sha256.count == 2)
        #expect(configuration.entry(for: "example.com").host == nil)  // *. never covers the apex
        #expect(configuration.entry(for: "example.org").host?.description == "**.example.org")  // **. does
        #expect(result.notes.contains { $0.contains("SHA-1") })
        let lines = "# pins\n*.example.com \(Self.pinA) \(Self.pinB)\n"
        #expect(try roundTrip(lines, .okhttp).configuration.hosts.count == 1)
        #expect(throws: TrustConfigurationImporter.ImportError.self) { try TrustConfigurationImporter.convert(Data("nothing here".utf8), from: .okhttp) }
    }

    @Test func importCommand() async throws {
        let dir = try temporaryDirectory()
        let input = dir + "/pins.txt"
        try "*.lab.test \(Self.pinA) \(Self.pinB)\n".write(toFile: input, atomically: true, encoding: .utf8)
        let (status, out, err) = try await run(CLI.binary, ["import", "--from", "okhttp", input])
        #expect(status == 0, "\(err)")
        #expect(out.contains("\"host\": \"*.lab.test\""))
        let output = dir + "/trust.json"
        #expect(try await run(CLI.binary, ["import", "--from", "okhttp", input, "-o", output]).0 == 0)
        #expect(try await run(CLI.binary, ["check-config", output]).0 == 0)
        #expect(try await run(CLI.binary, ["import", "--from", "ios", input]).0 == 2)
        #expect(try await run(CLI.binary, ["import", "--from", "ats", input]).0 == 1)
        // A conversion that does not validate (a pattern on a public suffix) says so: exit 1.
        try "**.co.uk \(Self.pinA) \(Self.pinB)\n".write(toFile: input, atomically: true, encoding: .utf8)
        let (refused, _, why) = try await run(CLI.binary, ["import", "--from", "okhttp", input])
        #expect(refused == 1)
        #expect(why.contains("public suffix"))
    }

    /// What the review found: pins must never move between hosts, widen, or vanish.
    @Test func importersNeverWidenOrMovePins() throws {
        // OkHttp: several add() calls on one line keep their own pins.
        let chained = #".add("a.example.com", "\#(Self.pinA)", "\#(Self.pinB)").add("b.example.com", "\#(Self.pinB)", "\#(Self.pinA)")"#
        let okhttp = try TrustConfigurationImporter.convert(Data(chained.utf8), from: .okhttp).configuration
        #expect(okhttp.hosts.map(\.host?.description) == ["a.example.com", "b.example.com"])
        #expect(okhttp.hosts.allSatisfy { $0.pins?.sha256.count == 2 })
        // Android: a nested domain-config's pin-set replaces the parent's; no pin-set means no pins (not an empty set);
        // base-config anchors and debug-overrides reach every domain.
        let xml = """
            <network-security-config>
              <base-config><trust-anchors><certificates src="@raw/corp_ca"/></trust-anchors></base-config>
              <domain-config>
                <domain>parent.example.com</domain>
                <pin-set><pin digest="SHA-256">\(Self.bareA)</pin><pin digest="SHA-256">\(Self.bareB)</pin></pin-set>
                <domain-config>
                  <domain>child.example.com</domain>
                  <pin-set><pin digest="SHA-256">\(Data(repeating: 0xC3, count: 32).base64EncodedString())</pin><pin digest="SHA-256">\(Data(repeating: 0xD4, count: 32).base64EncodedString())</pin></pin-set>
                </domain-config>
              </domain-config>
              <domain-config><domain>plain.example.com</domain></domain-config>
              <debug-overrides><trust-anchors><certificates src="@raw/charles"/></trust-anchors></debug-overrides>
            </network-security-config>
            """
        let android = try roundTrip(xml, .androidNSC).configuration
        let child = try #require(android.hosts.first { $0.host?.description == "child.example.com" })
        #expect(child.pins?.sha256.map(\.digest.first) == [0xC3, 0xD4])
        let plain = try #require(android.hosts.first { $0.host?.description == "plain.example.com" })
        #expect(plain.pins == nil)
        #expect(android.hosts.allSatisfy { $0.anchors?.certificates == ["res/raw/corp_ca"] && $0.anchors?.replaceSystem == true })
        #expect(android.hosts.allSatisfy { $0.debugOverrides?.anchors.certificates == ["res/raw/charles"] })
        // TrustKit: TSKExcludeSubdomainFromParentPolicy becomes an exclusion on the parent.
        let trustkit =
            #"{"TSKPinnedDomains": {"example.com": {"TSKIncludeSubdomains": true, "TSKPublicKeyHashes": ["\#(Self.bareA)", "\#(Self.bareB)"]}, "legacy.example.com": {"TSKExcludeSubdomainFromParentPolicy": true}}}"#
        let excluded = try roundTrip(trustkit, .trustkit).configuration
        #expect(excluded.hosts.count == 1 && excluded.hosts[0].exclude.map(\.description) == ["legacy.example.com"])
        #expect(excluded.entry(for: "legacy.example.com").host == nil)
    }

    @Test func configurationsBuiltInCodeAreCheckedToo() throws {
        var configuration = TrustConfiguration()
        var entry = TrustConfiguration.Entry(host: try HostPattern("x.example.com"))
        entry.pins = TrustConfiguration.Pins(sha256: [])
        configuration.hosts = [entry]
        #expect(throws: TrustConfigurationFileError.self) { try ConfiguredTrustEvaluator(configuration: configuration) }
        // The loader keeps checking an entry after a bad host.
        do {
            _ = try TrustConfiguration.parse(
                #"{"version": 2, "hosts": [{"host": "**.co.uk", "pins": {"sha256": ["bad"]}}]}"#, publicSuffixes: PublicSuffixList(contents: "uk\nco.uk\n"))
            Issue.record("accepted")
        } catch {
            let paths = Set(error.problems.map(\.path))
            #expect(paths.isSuperset(of: ["$.version", "$.hosts[0].host", "$.hosts[0].pins.sha256[0]"]), "\(error)")
        }
    }
}

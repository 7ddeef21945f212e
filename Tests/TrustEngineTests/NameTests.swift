import Foundation
import SwiftASN1
import Testing
import TrustLabPKI
import TrustTestSupport
import X509

@testable import Trust

@Suite("Names: canonical peer names, wildcards, name constraints", .paced)
struct NameTests {
    /// Case, trailing dot and IDN spellings of one host are the same peer name; confusables are refused.
    @Test func peerNamesAreCanonicalised() throws {
        #expect(try PeerName(host: "API.Example.COM.") == .dnsName("api.example.com"))
        #expect(try PeerName(host: "bücher.example") == .dnsName("xn--bcher-kva.example"))
        #expect(try PeerName(host: "BÜCHER.example") == .dnsName("xn--bcher-kva.example"))
        #expect(try PeerName(host: "xn--bcher-kva.example") == .dnsName("xn--bcher-kva.example"))
        #expect(try PeerName(host: "ѕрооғ.badssl.com") == .dnsName("xn--n1aae7f7o.badssl.com"))
        #expect(try PeerName(host: "例え.テスト") == .dnsName("xn--r8jz45g.xn--zckzah"))
        #expect(throws: PeerNameError.self) { try PeerName(host: "exa mple.com") }
        #expect(throws: PeerNameError.self) { try PeerName(host: "example..com") }
        // A zero-width space is ignored by UTS #46 (§5): the name is the one it looks like, never another.
        #expect(try PeerName(host: "exam\u{200B}ple.com") == .dnsName("example.com"))
        #expect(throws: PeerNameError.self) { try PeerName(host: "example.com\u{2215}evil.com") }  // division slash
        #expect(throws: PeerNameError.self) { try PeerName(host: "") }
    }

    /// The byte-level normalisation of presented dNSNames answers as the former `String` version
    /// for every ASCII name, and refuses every non-ASCII one (Unicode lower-casing turned KELVIN SIGN
    /// into an ASCII `k`). Seeded; the seed is printed.
    @Test func presentedNamesNormaliseAsTheStringVersionDid() {
        func reference(_ name: String) -> String? {
            let lowered = name.lowercased()
            let labels = lowered.split(separator: ".", omittingEmptySubsequences: false)
            guard !lowered.isEmpty, lowered.utf8.count <= 253 else { return nil }
            for (index, label) in labels.enumerated() {
                if index == 0 && label == "*" { continue }
                guard !label.isEmpty, label.utf8.count <= 63, label.first != "-", label.last != "-",
                    label.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d })
                else { return nil }
            }
            return lowered
        }
        let seed = UInt64.random(in: 1...UInt64.max)
        print("presentedNamesNormaliseAsTheStringVersionDid seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let alphabet = Array("aZz09-..**_ \u{E9}\u{212A}")
        var names = [
            "*", "*.", ".", "*.a", "a.*", "*z.example.com", "ba*.example.com", "**.a", String(repeating: "a", count: 63) + ".b",
            String(repeating: "a", count: 64) + ".b", String(repeating: "a.", count: 126) + "a", String(repeating: "a.", count: 127),
        ]
        for _ in 0..<20_000 {
            names.append(String((0..<Int(random.next() % 12)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }))
        }
        for name in names {
            let expected = name.utf8.allSatisfy({ $0 < 0x80 }) ? reference(name) : nil
            #expect(HostnameMatcher.normalisePresented(name) == expected, "\(name) (seed \(seed))")
        }
    }

    @Test func ipAddressesParseStrictly() {
        #expect(IPAddress("127.0.0.1")?.bytes == [127, 0, 0, 1])
        #expect(IPAddress("[::1]")?.description == "::1")
        #expect(IPAddress("2001:db8::1:0:0:1")?.description == "2001:db8::1:0:0:1")
        #expect(IPAddress("::ffff:192.0.2.1")?.bytes.suffix(4) == [192, 0, 2, 1])
        for bad in ["0x7f.0.0.1", "0177.0.0.1", "127.1", "1.2.3.256", "fe80::1%eth0", "1::2::3", "::g"] {
            #expect(IPAddress(bad) == nil, "\(bad)")
        }
        // Dotted quads, edge by edge: four octets of 1–3 digits, 0–255, no leading zero, nothing else.
        let quads: [(String, [UInt8]?)] = [
            ("0.0.0.0", [0, 0, 0, 0]), ("255.255.255.255", [255, 255, 255, 255]), ("10.20.30.40", [10, 20, 30, 40]),
            ("1.2.3.4.", nil), (".1.2.3.4", nil), ("1..2.3", nil), ("1.2.3", nil), ("1.2.3.4.5", nil), ("", nil), ("...", nil),
            ("00.1.2.3", nil), ("1.2.3.04", nil), ("1.2.3.0004", nil), ("1.2.3.2555", nil), ("256.0.0.1", nil), ("1.2.3.-4", nil),
            ("1.2.3.4 ", nil), ("١.٢.٣.٤", nil), ("1.2.3.a", nil), ("example.com", nil), ("1.2.3.999", nil),
        ]
        for (text, bytes) in quads {
            #expect(IPAddress.parseIPv4(Substring(text)) == bytes, "\(text)")
            // The request path's check: a dotted quad it accepts is already the address's own spelling.
            #expect(IPAddress.isIPv4Text(text) == (bytes != nil), "\(text)")
            if bytes != nil { #expect(IPAddress(text)?.description == text, "\(text)") }
        }
    }

    @Test func wildcardRulesFollowRFC6125() {
        let matcher = HostnameMatcher(publicSuffixes: PublicSuffixList(contents: "com\nco.uk\n*.ck\n!www.ck\n"))
        #expect(matcher.matches(presented: "*.example.com", host: "www.example.com"))
        #expect(matcher.matches(presented: "*.EXAMPLE.com", host: "www.example.com"))
        #expect(!matcher.matches(presented: "*.example.com", host: "example.com"))
        #expect(!matcher.matches(presented: "*.example.com", host: "a.b.example.com"))
        #expect(!matcher.matches(presented: "ba*.example.com", host: "bar.example.com"))
        #expect(!matcher.matches(presented: "*", host: "localhost"))
        #expect(!matcher.matches(presented: "*.com", host: "example.com"))
        #expect(!matcher.matches(presented: "*.co.uk", host: "example.co.uk"))
        #expect(!matcher.matches(presented: "*.foo.ck", host: "x.foo.ck"))
        #expect(!matcher.matches(presented: "www.*.example.com", host: "www.a.example.com"))
        #expect(!matcher.matches(presented: "under_score.example.com", host: "under_score.example.com"))
    }

    /// A constraint for example.com never admits a name that merely ends in the same characters.
    @Test func nameConstraintsRespectLabelBoundaries() async throws {
        let constrained = try LabAuthority.root(commonName: "Constrained Root", nameConstraints: NameConstraints(permittedDNSDomains: ["example.com"]))
        func verdict(_ name: String) async throws -> TrustDecision {
            let leaf = try constrained.leaf(dnsNames: [name])
            return await PathValidator(anchors: .only([constrained.certificate])).evaluate(try ServerTrust(presentedChain: leaf.chain, host: name))
        }
        #expect(try await verdict("example.com").isTrusted)
        #expect(try await verdict("www.example.com").isTrusted)
        for evil in ["evil-example.com", "xexample.com", "example.com.evil.com"] {
            #expect(try await verdict(evil).codes == ["name-constraint-violation"], "\(evil)")
        }
    }

    /// CVE-2025-61727: a wildcard that could stand for an excluded name is refused.
    @Test func wildcardCannotSlipPastAnExcludedSubtree() async throws {
        let constrained = try LabAuthority.root(commonName: "Excluding Root", nameConstraints: NameConstraints(excludedDNSDomains: ["bar.example.com"]))
        let leaf = try constrained.leaf(dnsNames: ["*.example.com"])
        let decision = await PathValidator(anchors: .only([constrained.certificate])).evaluate(
            try ServerTrust(presentedChain: leaf.chain, host: "foo.example.com"))
        #expect(decision.codes == ["name-constraint-violation"])
    }
}

@Suite("Wildcards on public suffixes (the embedded Public Suffix List)", .paced)
struct PublicSuffixWildcardTests {
    @Test func defaultPolicyRefusesAWildcardOnAPublicSuffix() async throws {
        let root = try LabAuthority.root(commonName: "PSL Root")
        let leaf = try root.leaf(dnsNames: ["*.co.uk"])
        let decision = await PathValidator(anchors: .only([root.certificate])).evaluate(try ServerTrust(presentedChain: leaf.chain, host: "example.co.uk"))
        #expect(decision.codes == ["name-mismatch"])
        let fine = try root.leaf(dnsNames: ["*.example.co.uk"])
        #expect(
            await PathValidator(anchors: .only([root.certificate])).evaluate(try ServerTrust(presentedChain: fine.chain, host: "www.example.co.uk")).isTrusted)
    }
}

@Suite("Public Suffix List: embedded copy, parsing, newer system copies", .paced)
struct PublicSuffixListTests {
    @Test func embeddedListAnswersTheListsOwnExamples() {
        let list = PublicSuffixList.embedded
        for suffix in ["com", "uk", "co.uk", "jp", "anything.kawasaki.jp", "xn--0trq7p7nn.jp", "github.io", "s3.amazonaws.com", "unlisted-tld"] {
            #expect(list.isPublicSuffix(suffix), "\(suffix)")
        }
        // An exception rule (!city.kawasaki.jp) beats the wildcard (*.kawasaki.jp); registrable names are not suffixes.
        for name in ["city.kawasaki.jp", "example.com", "example.co.uk", "www.example.com", "a.github.io", "kawasaki.jp"] {
            #expect(!list.isPublicSuffix(name), "\(name)")
        }
        #expect(!list.isEmpty)
        #expect(list.date == PublicSuffixList.embeddedListDate)
        #expect(PublicSuffixList.shared.isPublicSuffix("co.uk"))
    }

    @Test func binarySearchFindsEveryRuleAndNothingBetween() {
        let rules = PublicSuffixList.embedded.allRules
        #expect(rules.count > 9_000)
        for rule in rules where !rule.hasPrefix("*.") && !rule.hasPrefix("!") {
            #expect(PublicSuffixList.embedded.isPublicSuffix(rule), "\(rule)")
        }
        // Names just before, between and after sorted rules are not found by the search.
        let plain = rules.filter { !$0.hasPrefix("*.") && !$0.hasPrefix("!") && $0.contains(".") }
        let blob: StaticString = "b\nd\nf\n"
        for (name, expected) in [("a", false), ("b", true), ("c", false), ("d", true), ("e", false), ("f", true), ("g", false), ("bb", false), ("", false)] {
            #expect(PublicSuffixList.search(blob, for: name) == expected, "\(name)")
        }
        for rule in plain.prefix(500) {
            #expect(!PublicSuffixList.search(PublicSuffixList.embeddedRules, for: rule + "-"), "\(rule)-")
            #expect(!PublicSuffixList.search(PublicSuffixList.embeddedRules, for: String(rule.dropLast())) || rules.contains(String(rule.dropLast())))
        }
    }

    /// The generator and the library canonicalise alike: when the system copy is the one the embedded
    /// list was generated from (same date), their rules are identical, IDN A-labels included.
    @Test func embeddedListEqualsTheSystemCopyOfTheSameDate() throws {
        guard let system = PublicSuffixList.system() else {
            print("no system Public Suffix List (Debian package publicsuffix): comparison skipped")
            return
        }
        let systemDate = try systemListDay()
        guard systemDate == PublicSuffixList.embeddedListDate || system.date == PublicSuffixList.embeddedListDate else {
            print("system Public Suffix List dated \(system.date ?? systemDate), embedded \(PublicSuffixList.embeddedListDate): comparison skipped")
            return
        }
        let embedded = PublicSuffixList.embedded.allRules
        let parsed = system.allRules
        #expect(embedded.count == parsed.count)
        #expect(Set(embedded).symmetricDifference(parsed).sorted().prefix(10) == [])
    }

    private func systemListDay() throws -> String {
        let path = try #require(PublicSuffixList.systemPaths.first { FileManager.default.fileExists(atPath: $0) })
        let modified = try #require(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
        return String(ISO8601DateFormatter.string(from: modified, timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withFullDate]))
    }

    /// The modification day is computed without a Calendar; it agrees with Foundation's.
    @Test func modificationDayAgreesWithFoundation() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        for seconds in stride(from: -5_000_000_000.0, through: 10_000_000_000.0, by: 7_777_777.7) + [0, 86_399, 86_400, 951_782_400, 4_107_542_400] {
            let date = Date(timeIntervalSince1970: seconds)
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            let expected = String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
            #expect(PublicSuffixList.day(of: date) == expected, "\(seconds)")
        }
    }

    @Test func parsingIsByteLevelAndCanonical() {
        let list = PublicSuffixList(
            contents: "// VERSION: 2031-01-02_00-00-00_UTC\r\n// comment\nCOM\n*.CK  trailing words\n!WWW.ck\n\u{516C}\u{53F8}.cn\n\tbad\n..\nexa mple\n")
        #expect(list.date == "2031-01-02")
        // A rule ends at the first space or tab; a line that starts with one holds none (the list's format).
        #expect(list.allRules == ["com", "exa", "xn--55qx5d.cn", "*.ck", "!www.ck"])
        #expect(list.isPublicSuffix("foo.ck"))
        #expect(!list.isPublicSuffix("www.ck"))
        #expect(list.isPublicSuffix("xn--55qx5d.cn"))
        #expect(PublicSuffixList(contents: "").isEmpty)
        #expect(PublicSuffixList(bytes: [0xFF, 0xFE, 0x0A, 0x80]).isEmpty)
    }

    @Test func aNewerSystemCopyOverridesTheEmbeddedOneAndAnOlderDoesNot() throws {
        let folder = URL(fileURLWithPath: try temporaryDirectory())
        defer { try? FileManager.default.removeItem(at: folder) }
        let newer = folder.appendingPathComponent("newer.dat")
        try Data("// VERSION: 2999-12-31_00-00-00_UTC\nexample\n".utf8).write(to: newer)
        let chosen = PublicSuffixList.newest(systemPaths: [newer.path])
        #expect(chosen.date == "2999-12-31")
        #expect(chosen.isPublicSuffix("example"))
        #expect(!chosen.isPublicSuffix("co.uk"))

        let older = folder.appendingPathComponent("older.dat")
        try Data("// VERSION: 2001-01-01_00-00-00_UTC\nexample\n".utf8).write(to: older)
        #expect(PublicSuffixList.newest(systemPaths: [older.path]) == .embedded)

        // No header: the file's modification day decides.
        let undated = folder.appendingPathComponent("undated.dat")
        try Data("example\n".utf8).write(to: undated)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 0)], ofItemAtPath: undated.path)
        #expect(PublicSuffixList.newest(systemPaths: [undated.path]) == .embedded)
        try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: undated.path)
        #expect(PublicSuffixList.newest(systemPaths: [undated.path]).isPublicSuffix("example"))

        // Missing or empty files leave the embedded list in place.
        #expect(PublicSuffixList.newest(systemPaths: [folder.appendingPathComponent("missing").path]) == .embedded)
        let empty = folder.appendingPathComponent("empty.dat")
        try Data("// VERSION: 2999-12-31_00-00-00_UTC\n".utf8).write(to: empty)
        #expect(PublicSuffixList.newest(systemPaths: [empty.path]) == .embedded)
    }

    /// The embedded table answers as the Debian file it was generated from, for names made from
    /// every kind of rule: each rule, its parent, names one and two labels below it, wildcard
    /// children, exceptions and their children, and random names (seeded; the seed is printed).
    @Test func embeddedListAnswersAsTheSystemFileForGeneratedNames() throws {
        guard let path = PublicSuffixList.debianPaths.first(where: { FileManager.default.fileExists(atPath: $0) }),
            let bytes = FileManager.default.contents(atPath: path)
        else {
            print("no system Public Suffix List (Debian package publicsuffix): comparison skipped")
            return
        }
        let system = PublicSuffixList(bytes: Array(bytes))
        let modified = try #require(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
        guard (system.date ?? PublicSuffixList.day(of: modified)) == PublicSuffixList.embeddedListDate else {
            print(
                "system Public Suffix List dated \(system.date ?? PublicSuffixList.day(of: modified)), embedded \(PublicSuffixList.embeddedListDate): comparison skipped"
            )
            return
        }
        let seed = UInt64(ProcessInfo.processInfo.environment["PSL_TEST_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)
        print("embeddedListAnswersAsTheSystemFileForGeneratedNames seed \(seed) (PSL_TEST_SEED=\(seed) repeats it)")
        var random = SeededGenerator(seed: seed)
        let labels = ["www", "a", "xn--55qx5d", "foo-bar", "0", "co", "com", "uk", "ck", "kawasaki", "jp", "github", "io"]
        let alphabet = Array("abcdefghij-0123456789")
        func label() -> String {
            if random.next() % 3 == 0 { return labels[Int(random.next() % UInt64(labels.count))] }
            let characters = (0..<(1 + Int(random.next() % 8))).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            return String(characters).trimmingCharacters(in: CharacterSet(charactersIn: "-"))
        }
        var names: [String] = []
        for rule in system.allRules {
            let body = rule.hasPrefix("*.") ? String(rule.dropFirst(2)) : rule.hasPrefix("!") ? String(rule.dropFirst()) : rule
            names += [body, label() + "." + body, label() + "." + label() + "." + body]
            if let dot = body.firstIndex(of: ".") { names.append(String(body[body.index(after: dot)...])) }
        }
        for _ in 0..<5_000 {
            names.append((0..<(1 + Int(random.next() % 4))).map { _ in label() }.filter { !$0.isEmpty }.joined(separator: "."))
        }
        names = names.filter { !$0.isEmpty }
        #expect(names.count >= 10_000)
        var disagreements: [String] = []
        for name in names where PublicSuffixList.embedded.isPublicSuffix(name) != system.isPublicSuffix(name) {
            disagreements.append(name)
        }
        print("\(names.count) names compared, \(disagreements.count) disagreements")
        #expect(disagreements.prefix(10) == [], "seed \(seed)")
    }

    /// Without any system copy (`TRUST_PUBLIC_SUFFIX_LIST` set empty, as on a machine without the
    /// `publicsuffix` package), a `trust evaluate` process still refuses a wildcard on a public
    /// suffix; pointing the variable at a newer list without `co.uk` shows the variable is what
    /// decided which list the process used.
    @Test func wildcardOnAPublicSuffixIsRefusedWithoutTheSystemList() async throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let root = try LabAuthority.root(commonName: "PSL Process Root")
        let wildcard = try root.leaf(dnsNames: ["*.co.uk"])
        try Data(wildcard.chain.map(\.pemString).joined().utf8).write(to: URL(fileURLWithPath: folder + "/chain.pem"))
        try Data(root.certificate.pemString.utf8).write(to: URL(fileURLWithPath: folder + "/root.pem"))
        try Data("// VERSION: 2999-12-31_00-00-00_UTC\nexample\n".utf8).write(to: URL(fileURLWithPath: folder + "/newer.dat"))
        let evaluate = [
            CLI.binary, "evaluate", "--chain", folder + "/chain.pem", "--anchors", folder + "/root.pem", "--anchors-only", "--host", "example.co.uk", "--json",
        ]

        let (hidden, output, _) = try await run("/usr/bin/env", ["TRUST_PUBLIC_SUFFIX_LIST="] + evaluate)
        #expect(hidden == 1)
        #expect(output.contains("name-mismatch"))
        let (other, _, _) = try await run("/usr/bin/env", ["TRUST_PUBLIC_SUFFIX_LIST=" + folder + "/newer.dat"] + evaluate)
        #expect(other == 0)
    }
}

/// SplitMix64: a small seeded generator, so a failing random test can be repeated from its printed seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

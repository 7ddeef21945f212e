import Foundation
import Testing
import Trust
import TrustLabPKI
import TrustNIO
import TrustTestSupport

/// The configuration members that act on the connection, which this module applies: `minimumTLSVersion` and
/// `clientIdentity` are read by every reader of the file with the engine's strictness, and written back by
/// `jsonText()`; a valid file is never refused because of how it was read.
@Suite("Transport members of the configuration file: read by every reader")
struct TransportMembersTests {
    static let psl = PublicSuffixList(contents: "test\ncom\nco.uk\n")

    func problems(_ text: String) -> [TrustConfigurationProblem] {
        do {
            _ = try TrustConfiguration.parse(text, publicSuffixes: Self.psl)
            return []
        } catch {
            return error.problems
        }
    }

    @Test func exactBeatsPatternsAndTheMostSpecificWins() throws {
        let text = """
            {"version": 1, "base": {"mode": "report-only"},
             "hosts": [
               {"host": "**.example.com", "minimumTLSVersion": "1.3"},
               {"host": "*.example.com", "minimumRSABits": 3072, "exclude": ["legacy.example.com"]},
               {"host": "**.api.example.com", "minimumECBits": 384},
               {"host": "www.example.com", "minimumRSABits": 4096}
             ]}
            """
        let configuration = try TrustConfiguration.parse(text, publicSuffixes: PublicSuffixList(contents: "com\nco.uk\n"))
        #expect(configuration.entry(for: "www.example.com").minimumRSABits == 4096)
        #expect(configuration.entry(for: "WWW.Example.COM.").minimumRSABits == 4096)
        #expect(configuration.entry(for: "mail.example.com").minimumRSABits == 3072)
        #expect(configuration.entry(for: "legacy.example.com").minimumTLSVersion == .tls13)  // excluded from *. → falls to **.
        #expect(configuration.entry(for: "example.com").minimumTLSVersion == .tls13)
        #expect(configuration.entry(for: "v1.api.example.com").minimumECBits == 384)
        #expect(configuration.entry(for: "api.example.com").minimumECBits == 384)
        #expect(configuration.entry(for: "evil-example.com").mode == .reportOnly)  // base
    }

    /// The engine reads them with no help from this module: a file that uses them is accepted by each reader, and a
    /// member that is not one of them is still an unknown member, whose problem lists them among the known.
    @Test func everyReaderReadsThem() throws {
        let text = #"""
            {"version": 1, "base": {"minimumTLSVersion": "1.3"},
             "hosts": [{"host": "a.example.com", "clientIdentity": {"pkcs12": "id.p12"}}]}
            """#
        #expect(problems(text).isEmpty)
        let configuration = try TrustConfiguration.parse(text, publicSuffixes: Self.psl)
        #expect(configuration.base.minimumTLSVersion == .tls13)
        #expect(configuration.entry(for: "a.example.com").clientIdentity?.pkcs12 == "id.p12")
        let file = try LabTrustConfigurationFile()
        defer { file.remove() }
        try file.write(text)
        #expect(try ConfiguredTrustEvaluator(contentsOf: file.path, publicSuffixes: Self.psl).configuration == configuration)
        #expect(try TrustConfiguration.load(contentsOf: file.path, publicSuffixes: Self.psl) == configuration)

        let refused = problems(#"{"version": 1, "base": {"minimumTLSVersions": "1.3"}}"#)
        #expect(refused.map(\.path) == ["$.base.minimumTLSVersions"])
        #expect(refused.first?.message.contains("unknown member") == true && refused.first?.message.contains("minimumTLSVersion,") == true, "\(refused)")
    }

    /// Their values are checked as strictly as the engine's, every problem at once with the engine's own.
    @Test func badValuesAreProblemsAtTheirPaths() {
        let refused = problems(
            #"""
            {"version": 1, "base": {"minimumTLSVersion": "1.1"},
             "hosts": [
               {"host": "a.example.com", "minimumTLSVersion": 1.3},
               {"host": "b.example.com", "clientIdentity": {"pkcs12": "id.p12", "certificate": "chain.pem"}},
               {"host": "c.example.com", "clientIdentity": {"passphraseEnvironment": "PASS"}},
               {"host": "d.example.com", "clientIdentity": {"pkcs12": "id.p12", "password": "hunter2"}},
               {"host": "e.example.com", "clientIdentity": "id.p12", "minimumRSABits": 1024}
             ]}
            """#)
        #expect(
            refused.map(\.path) == [
                "$.base.minimumTLSVersion", "$.hosts[0].minimumTLSVersion", "$.hosts[1].clientIdentity", "$.hosts[2].clientIdentity",
                "$.hosts[3].clientIdentity.password", "$.hosts[4].minimumRSABits", "$.hosts[4].clientIdentity",
            ], "\(refused)")
        #expect(refused[0].message == #"must be "1.2" or "1.3", not "1.1""#)
        #expect(!refused.contains { $0.message.contains("hunter2") }, "a value is not quoted in an unknown member's problem")
    }

    /// `jsonText()` writes them back; the parsed file equals the configuration it was written from. The default
    /// (TLS 1.2) is neither stored nor written: a file that says "1.2" is the same as one that says nothing.
    @Test func theyRoundTripAndTheDefaultIsNotStored() throws {
        var entry = TrustConfiguration.Entry(host: try HostPattern("api.example.com"))
        entry.minimumTLSVersion = .tls13
        entry.clientIdentity = TrustConfiguration.ClientIdentityReference(pkcs12: "id.p12", passphraseEnvironment: "ID_PASSPHRASE")
        let configuration = TrustConfiguration(hosts: [entry])
        let text = configuration.jsonText()
        #expect(text.contains(#""minimumTLSVersion": "1.3""#) && text.contains(#""passphraseEnvironment": "ID_PASSPHRASE""#), "\(text)")
        #expect(try TrustConfiguration.parse(text, publicSuffixes: Self.psl) == configuration)

        let explicit = try TrustConfiguration.parse(#"{"version": 1, "base": {"minimumTLSVersion": "1.2"}}"#, publicSuffixes: Self.psl)
        #expect(explicit == TrustConfiguration())
        #expect(explicit.base.minimumTLSVersion == .tls12 && explicit.base.clientIdentity == nil)
        #expect(!explicit.jsonText().contains("minimumTLSVersion"))
        var lowered = configuration
        lowered.hosts[0].minimumTLSVersion = .tls12
        lowered.hosts[0].clientIdentity = nil
        #expect(lowered.hosts[0] == TrustConfiguration.Entry(host: try HostPattern("api.example.com")))
    }

    /// A reloading configuration reads them at the start and at every reload: a reload to a TLS minimum that is not
    /// valid keeps the configuration in force.
    @Test func aReloadingConfigurationReadsThemAtEveryReload() throws {
        let file = try LabTrustConfigurationFile()
        defer { file.remove() }
        func text(_ minimum: String) -> String { #"{"version": 1, "hosts": [{"host": "good.lab.test", "minimumTLSVersion": "\#(minimum)"}]}"# }
        try file.write(text("1.3"))
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: LabTrustConfigurationFile.psl)
        #expect(reloading.current.configuration.entry(for: "good.lab.test").minimumTLSVersion == .tls13)
        try file.write(text("1.1"), modified: Date(timeIntervalSinceNow: 5))
        let refused = reloading.reload(force: true).rejection
        guard case .malformed(let refusedFile) = refused?.detail else {
            Issue.record("a TLS minimum of 1.1 was not refused: \(String(describing: refused))")
            return
        }
        #expect(refusedFile.problems.map(\.path) == ["$.hosts[0].minimumTLSVersion"])
        #expect(reloading.generation == 1)
        #expect(reloading.current.configuration.entry(for: "good.lab.test").minimumTLSVersion == .tls13)
    }

    /// A signed bundle's configuration holds them, read by the bundle parser and by the verifier alike.
    @Test func aSignedBundleHoldsThem() throws {
        var entry = TrustConfiguration.Entry(host: try HostPattern("good.lab.test"))
        entry.clientIdentity = TrustConfiguration.ClientIdentityReference(certificate: "chain.pem", key: "key.pem")
        let bytes = Array(
            TrustConfigurationBundle(configuration: TrustConfiguration(hosts: [entry]), sequence: 1, expires: Date(timeIntervalSinceNow: 3600))
                .jsonText().utf8)
        let parsed = try TrustConfigurationBundle(parsing: bytes, publicSuffixes: Self.psl)
        #expect(parsed.configuration.hosts.first?.clientIdentity?.key == "key.pem")

        let key = TrustConfigurationSigningKey()
        let signature = try key.signature(for: bytes)
        let verified = try SignedTrustConfiguration.verify(
            bundle: bytes, signature: signature, trustedKeys: [key.publicKey], lastAcceptedSequence: nil, publicSuffixes: Self.psl)
        #expect(verified.configuration.hosts.first?.clientIdentity?.certificate == "chain.pem")
    }

    /// Entries differ by the values of these members, not only by whether they are set, and equal entries hash equally.
    @Test func entriesCompareByTheMembersValues() throws {
        func entry(_ minimum: TLSMinimum, _ pkcs12: String?) throws -> TrustConfiguration.Entry {
            var entry = TrustConfiguration.Entry(host: try HostPattern("a.example.com"))
            entry.minimumTLSVersion = minimum
            entry.clientIdentity = pkcs12.map { TrustConfiguration.ClientIdentityReference(pkcs12: $0) }
            return entry
        }
        #expect(try entry(.tls13, "a.p12") == entry(.tls13, "a.p12"))
        #expect(try entry(.tls13, "a.p12").hashValue == entry(.tls13, "a.p12").hashValue)
        #expect(try entry(.tls13, "a.p12") != entry(.tls13, "b.p12"))
        #expect(try entry(.tls13, nil) != entry(.tls12, nil))
        #expect(try Set([entry(.tls13, "a.p12"), entry(.tls13, "a.p12"), entry(.tls13, "b.p12")]).count == 2)
    }
}

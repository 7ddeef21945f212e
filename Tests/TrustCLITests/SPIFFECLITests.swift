import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustNIO
import TrustTestSupport

/// `trust evaluate` and `trust get` with `--spiffe-id` and `--spiffe-bundle`: peers trusted by SPIFFE ID.
@Suite("CLI: --spiffe-id and --spiffe-bundle", .serialized, .timeLimit(.minutes(5)), .paced)
struct SPIFFECLITests {
    static let serverID = "spiffe://example.org/ns/prod/sa/api"
    static let clientID = "spiffe://example.org/ns/prod/sa/web"

    /// The workloads' files: the bundle (the root, an SVID of its trust domain), a root without a SPIFFE ID, and each
    /// SVID's chain and key.
    struct Files: Sendable {
        let dir: String
        let bundle: String
        let server: LabIdentity
        let bundleRoot: LabAuthority
        var serverChain: String { dir + "/server.pem" }
        var clientChain: String { dir + "/client.pem" }
        var clientKey: String { dir + "/client-key.pem" }
    }

    static let files: Files = {
        do {
            let dir = try TestScratch.folder("spiffe-cli")
            let root = try LabAuthority.spiffeRoot(trustDomain: "example.org")
            let signing = try root.spiffeSigningCertificate(commonName: "example.org workload CA", uris: ["spiffe://example.org"])
            let server = try signing.svid(serverID)
            let client = try signing.svid(clientID)
            let files = Files(dir: dir, bundle: dir + "/bundle.pem", server: server, bundleRoot: root)
            try root.identity.certificatePEM.write(toFile: files.bundle, atomically: true, encoding: .utf8)
            try server.chainPEM.write(toFile: files.serverChain, atomically: true, encoding: .utf8)
            try client.chainPEM.write(toFile: files.clientChain, atomically: true, encoding: .utf8)
            try client.privateKeyPEM.write(toFile: files.clientKey, atomically: true, encoding: .utf8)
            return files
        } catch {
            fatalError("cannot write the SPIFFE files: \(error)")
        }
    }()

    @Test func evaluateTrustsAChainByItsSPIFFEID() async throws {
        let f = Self.files
        let base = ["evaluate", "--chain", f.serverChain, "--spiffe-bundle", f.bundle]
        let (trusted, out, err) = try await run(CLI.binary, base + ["--spiffe-id", Self.serverID])
        #expect(trusted == 0, "\(out)\(err)")
        // A trust domain, or a path prefix, allows it too; --json carries the codes of a refusal.
        #expect(try await run(CLI.binary, base + ["--spiffe-id", "spiffe://example.org"]).0 == 0)
        #expect(try await run(CLI.binary, base + ["--spiffe-id", "spiffe://example.org/ns/prod/*"]).0 == 0)
        let (refused, json, _) = try await run(CLI.binary, base + ["--spiffe-id", "spiffe://example.org/ns/prod/sa/ap", "--json"])
        #expect(refused == 1 && json.contains("spiffe-id-not-allowed"), "\(json)")
        // The trust domain named with the file: TRUST-DOMAIN=FILE.
        #expect(
            try await run(CLI.binary, ["evaluate", "--chain", f.serverChain, "--spiffe-bundle", "example.org=" + f.bundle, "--spiffe-id", Self.serverID]).0 == 0
        )
        let (other, text, _) = try await run(
            CLI.binary, ["evaluate", "--chain", f.serverChain, "--spiffe-bundle", "other.test=" + f.bundle, "--spiffe-id", "spiffe://other.test"])
        #expect(other == 1 && text.contains("spiffe-trust-domain-not-trusted"), "\(text)")
    }

    @Test func badSPIFFEOptionsAreUsageErrors() async throws {
        let f = Self.files
        let chain = ["evaluate", "--chain", f.serverChain]
        #expect(try await run(CLI.binary, chain + ["--spiffe-id", Self.serverID]).0 == 2)
        #expect(try await run(CLI.binary, chain + ["--spiffe-bundle", f.bundle]).0 == 2)
        let (invalid, _, err) = try await run(CLI.binary, chain + ["--spiffe-bundle", f.bundle, "--spiffe-id", "spiffe://Example.org/\u{1B}[31m"])
        #expect(invalid == 2 && err.contains("trust domain") && err.contains("\\x1b"), "\(err)")
        #expect(err.split(separator: "\n").allSatisfy { !DisplayText.containsUnsafeCharacter($0) }, "\(err.debugDescription)")
        #expect(try await run(CLI.binary, chain + ["--spiffe-bundle", f.dir + "/missing.pem", "--spiffe-id", Self.serverID]).0 == 2)
        #expect(try await run(CLI.binary, chain + ["--spiffe-bundle", f.bundle, "--spiffe-id", "spiffe://elsewhere.test/a"]).0 == 2)
        #expect(try await run(CLI.binary, chain + ["--spiffe-bundle", f.bundle, "--spiffe-id", Self.serverID, "--anchors", f.bundle]).0 == 2)
        #expect(try await run(CLI.binary, chain + ["--spiffe-bundle", f.bundle, "--spiffe-id", Self.serverID, "--mode", "none"]).0 == 2)
        let get = ["get", "https://127.0.0.1:1/", "--spiffe-bundle", f.bundle, "--spiffe-id", Self.serverID]
        #expect(try await run(CLI.binary, get + ["--cacert", f.bundle]).0 == 2)
        #expect(try await run(CLI.binary, get + ["--no-validate-domain"]).0 == 2)
    }

    /// `trust get https://127.0.0.1:PORT/` to a server known only by its SPIFFE ID, with a client SVID.
    @Test func getTalksToAServerIdentifiedOnlyBySPIFFEID() async throws {
        let f = Self.files
        let bundles = SPIFFETrustBundles([SPIFFEBundle(trustDomain: try SPIFFETrustDomain(parsing: "example.org"), anchors: [f.bundleRoot.certificate])])
        let server = try await LabServer.start(
            name: "spiffe", host: "127.0.0.1", chain: f.server.chain, privateKey: f.server.privateKey,
            clientAuthentication: try ClientAuthentication(spiffeBundles: bundles, allowedSPIFFEIDs: [try SPIFFEIDMatcher(parsing: Self.clientID)]))
        try await withTeardown({ try? await server.shutdown() }) {
            let base = ["get", server.baseURL + "/whoami", "--spiffe-bundle", f.bundle, "--cert", f.clientChain, "--key", f.clientKey]
            let (status, out, err) = try await run(CLI.binary, base + ["--spiffe-id", Self.serverID])
            #expect(status == 0 && out.contains(Self.clientID), "\(out)\(err)")
            let (refused, _, why) = try await run(CLI.binary, base + ["--spiffe-id", "spiffe://example.org/ns/prod/sa/billing"])
            #expect(refused != 0 && why.contains("spiffe-id-not-allowed"), "\(refused): \(why)")
        }
    }
}

import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport
import X509

/// Certificates whose subject, issuer and subjectAltNames carry terminal controls, a C1 control and
/// U+202E (``HostileNames``, made at test time): no output of `trust evaluate`, `trust inspect`,
/// `trust get -v`, `trust pin` or a refusal message holds one of them raw (each shows escaped, once:
/// `\x1b`, never `\\x1b`), and `--json` carries the exact names.
@Suite("Hostile certificate names: escaped in every output, exact in JSON", .serialized, .timeLimit(.minutes(5)), .paced)
struct HostileNamesCLITests {
    static var hostile: HostileNames.PKI { HostileNames.pki }
    static let hostileCN = HostileNames.commonName
    static let hostileRootCN = HostileNames.rootCommonName
    static let hostileDNS = HostileNames.dnsName

    static func expectSafe(_ output: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        HostileNames.expectEscaped(output, what, sourceLocation: sourceLocation)
    }

    static func expectNoRawControl(_ output: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        HostileNames.expectNoRawControl(output, what, sourceLocation: sourceLocation)
    }

    @Test func certificatesHoldTheHostileNamesExactly() throws {
        let leaf = Self.hostile.leaf.certificate
        let parsed = try CertificateSource.certificates(pem: Self.hostile.leaf.certificatePEM)
        #expect(parsed == [leaf])
        // RFC 4514 text (swift-certificates escapes `;`), every control character as it is.
        #expect(leaf.subject.description == "CN=" + Self.hostileCN.replacingOccurrences(of: ";", with: "\\;") + ",O=swift-trust lab")
        #expect(leaf.issuer.description == "CN=" + Self.hostileRootCN + ",O=swift-trust lab")
        #expect(CertificateSummary(leaf).subjectAlternativeNames == ["good.lab.test", Self.hostileDNS])
    }

    @Test func evaluateEscapesInTextAndIsExactInJSON() async throws {
        let dir = Self.hostile.directory
        let base = ["evaluate", "--chain", dir + "/chain.pem", "--anchors", dir + "/root.pem", "--anchors-only"]
        let (trusted, out, err) = try await run(CLI.binary, base + ["--host", "good.lab.test"])
        #expect(trusted == 0, "\(out)\(err)")
        Self.expectSafe(out, "evaluate")
        Self.expectNoRawControl(err, "evaluate stderr")

        // Refusals: a name mismatch lists the hostile SAN; an expired hostile leaf; an unknown hostile root.
        let (mismatch, mismatchOut, _) = try await run(CLI.binary, base + ["--host", "other.lab.test"])
        #expect(mismatch == 1)
        Self.expectSafe(mismatchOut, "evaluate (name mismatch)")
        #expect(mismatchOut.contains("name-mismatch"))
        let (expired, expiredOut, _) = try await run(
            CLI.binary, ["evaluate", "--chain", dir + "/expired.pem", "--anchors", dir + "/root.pem", "--anchors-only", "--host", "good.lab.test"])
        #expect(expired == 1)
        Self.expectSafe(expiredOut, "evaluate (expired)")
        #expect(expiredOut.contains("[expired]"))
        let (unknown, unknownOut, _) = try await run(
            CLI.binary, ["evaluate", "--chain", dir + "/chain.pem", "--anchors", CLI.lab + "/roots.pem", "--anchors-only", "--host", "good.lab.test"])
        #expect(unknown == 1)
        Self.expectSafe(unknownOut, "evaluate (unknown root)")

        // --json: exact JSON, the exact names after a round trip.
        let (jsonStatus, json, _) = try await run(CLI.binary, base + ["--host", "good.lab.test", "--json"])
        #expect(jsonStatus == 0)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let presented = try #require((document["presentedChain"] as? [[String: Any]])?.first)
        #expect(presented["subject"] as? String == Self.hostile.leaf.certificate.subject.description)
        #expect(presented["issuer"] as? String == Self.hostile.root.certificate.subject.description)
        #expect(presented["subjectAlternativeNames"] as? [String] == ["good.lab.test", Self.hostileDNS])
    }

    @Test func pinEscapesTheSubject() async throws {
        let (status, out, err) = try await run(CLI.binary, ["pin", Self.hostile.directory + "/chain.pem"])
        #expect(status == 0, "\(err)")
        Self.expectSafe(out, "pin")
        let (_, json, _) = try await run(CLI.binary, ["pin", "--json", Self.hostile.directory + "/chain.pem"])
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        #expect(entries.first?["subject"] as? String == Self.hostile.leaf.certificate.subject.description)
    }

    /// A server presenting the hostile leaf: `inspect` (trusted, and refused: expired, unknown root) and
    /// `get -v` (trusted; refused with exit 60: the refusal message), text and JSON.
    @Test func inspectAndGetEscapeWhatTheServerPresents() async throws {
        let dir = Self.hostile.directory
        let good = try await LabServer.start(
            name: "hostile", host: "good.lab.test", chain: [Self.hostile.leaf.certificate], privateKey: Self.hostile.leaf.privateKey)
        let expired = try await LabServer.start(
            name: "hostile-expired", host: "good.lab.test", chain: [Self.hostile.expiredLeaf.certificate],
            privateKey: Self.hostile.expiredLeaf.privateKey)
        try await withTeardown({
            try? await good.shutdown()
            try? await expired.shutdown()
        }) {
            func inspect(_ server: LabServer, _ extra: [String]) async throws -> (Int32, String, String) {
                try await run(CLI.binary, ["inspect", server.baseURL, "--resolve", "good.lab.test:\(server.port):127.0.0.1"] + extra)
            }
            func get(_ server: LabServer, _ extra: [String]) async throws -> (Int32, String, String) {
                try await run(
                    CLI.binary, ["get", server.baseURL + "/", "--resolve", "good.lab.test:\(server.port):127.0.0.1", "-o", "/dev/null", "-s", "-S"] + extra)
            }
            let (trusted, out, err) = try await inspect(good, ["--cacert", dir + "/root.pem", "--anchors-only"])
            #expect(trusted == 0, "\(out)\(err)")
            Self.expectSafe(out, "inspect")
            let (refused, refusedOut, _) = try await inspect(expired, ["--cacert", dir + "/root.pem", "--anchors-only"])
            #expect(refused == 1)
            Self.expectSafe(refusedOut, "inspect (expired)")
            #expect(refusedOut.contains("expired: "))
            let (unknown, unknownOut, _) = try await inspect(good, ["--cacert", CLI.lab + "/roots.pem", "--anchors-only"])
            #expect(unknown == 1)
            Self.expectSafe(unknownOut, "inspect (unknown root)")

            let (jsonStatus, json, _) = try await inspect(good, ["--cacert", dir + "/root.pem", "--anchors-only", "--json"])
            #expect(jsonStatus == 0)
            let document = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            let presented = try #require((document["presentedChain"] as? [[String: Any]])?.first)
            #expect(presented["subject"] as? String == Self.hostile.leaf.certificate.subject.description)
            #expect(presented["subjectAlternativeNames"] as? [String] == ["good.lab.test", Self.hostileDNS])

            let (got, _, verbose) = try await get(good, ["--cacert", dir + "/root.pem", "-v"])
            #expect(got == 0, "\(verbose)")
            Self.expectSafe(verbose, "get -v")
            // Refusals: exit 60 with the reasons (an expired hostile leaf; a hostile issuer nobody trusts).
            for (server, anchors, what) in [(expired, dir + "/root.pem", "expired"), (good, CLI.lab + "/roots.pem", "unknown root")] {
                for flags in [[String](), ["-v"]] {
                    let (code, _, message) = try await get(server, ["--cacert", anchors, "--anchors-only"] + flags)
                    #expect(code == 60, "\(what) \(flags): \(message)")
                    Self.expectSafe(message, "get \(flags) refusal (\(what))")
                }
            }
        }
    }
}

import Foundation
import Testing
import Trust
import TrustLab
import TrustLabPKI
import TrustTestSupport

/// The CLI's contract for missing intermediates (Authority Information Access): `trust get` and `trust inspect`
/// fetch by default and `--no-aia` turns it off; `trust evaluate` stays offline unless `--aia` is given.
@Suite("trust get/inspect/evaluate and missing intermediates", .serialized, .timeLimit(.minutes(5)), .paced)
struct MissingIntermediatesCLITests {
    /// A CA publication point serving the lab intermediate, a server presenting only a leaf that names it, and that
    /// leaf written as PEM.
    static func lab() async throws -> (publisher: LabCRLServer, server: LabServer, leafPEM: String) {
        let publisher = try await LabCRLServer.start()
        publisher.publish(bytes: Lab.pki.intermediate.certificate.derBytes, as: "issuing.der", contentType: "application/pkix-cert")
        let leaf = try Lab.pki.intermediate.leaf(dnsNames: ["good.lab.test"], caIssuers: [publisher.url("issuing.der")])
        let server = try await LabServer.start(
            name: "aia", host: "good.lab.test", chain: [leaf.certificate], privateKey: leaf.privateKey, protocols: .http1Only)
        let file = try TestScratch.folder("aia") + "/leaf.pem"
        try leaf.certificate.pemString.write(toFile: file, atomically: true, encoding: .utf8)
        return (publisher, server, file)
    }

    @Test func getFetchesByDefaultAndNoAIARefuses() async throws {
        let (publisher, server, _) = try await Self.lab()
        let base = ["get", server.baseURL + "/", "--resolve", "\(server.host):\(server.port):127.0.0.1", "--cacert", CLI.lab + "/roots.pem"]
        let (status, out, err) = try await run(CLI.binary, base + ["-v"])
        #expect(status == 0, "\(err)")
        #expect(out.contains("hello from aia"), "\(out)")
        #expect(err.contains("note: fetched") && err.contains(publisher.url("issuing.der")), "\(err)")
        let (offStatus, _, offErr) = try await run(CLI.binary, base + ["--no-aia"])
        #expect(offStatus == 60, "\(offErr)")
        #expect(publisher.requestCount("issuing.der") == 1)
        try await server.shutdown()
        await publisher.shutdown()
    }

    @Test func inspectFetchesByDefaultAndNoAIARefuses() async throws {
        let (publisher, server, _) = try await Self.lab()
        let base = ["inspect", server.baseURL, "--resolve", "\(server.host):\(server.port):127.0.0.1", "--cacert", CLI.lab + "/roots.pem"]
        let (status, out, err) = try await run(CLI.binary, base)
        #expect(status == 0, "\(out) \(err)")
        #expect(out.contains("TRUSTED") && out.contains("fetched"), "\(out)")
        let (jsonStatus, json, _) = try await run(CLI.binary, base + ["--json"])
        #expect(jsonStatus == 0)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let notes = report["notes"] as? [String] ?? []
        #expect(notes.contains { $0.contains("fetched") && $0.contains(publisher.url("issuing.der")) }, "\(json)")
        #expect((report["validatedPath"] as? [Any])?.count == 3 && (report["presentedChain"] as? [Any])?.count == 1)
        let (offStatus, offOut, _) = try await run(CLI.binary, base + ["--no-aia"])
        #expect(offStatus == 1 && offOut.contains("incomplete chain"), "\(offOut)")
        try await server.shutdown()
        await publisher.shutdown()
    }

    @Test func evaluateIsOfflineUnlessAIAIsGiven() async throws {
        let (publisher, server, leafPEM) = try await Self.lab()
        let base = ["evaluate", "--chain", leafPEM, "--host", "good.lab.test", "--anchors", CLI.lab + "/roots.pem", "--json"]
        let (status, out, _) = try await run(CLI.binary, base)
        #expect(status == 1, "\(out)")
        #expect(publisher.requestCount("issuing.der") == 0)
        let (fetchedStatus, fetched, err) = try await run(CLI.binary, base + ["--aia"])
        #expect(fetchedStatus == 0, "\(fetched) \(err)")
        #expect(fetched.contains("fetched") && fetched.contains(publisher.url("issuing.der")), "\(fetched)")
        #expect(publisher.requestCount("issuing.der") == 1)
        // With a configuration file too: offline without --aia, completed with it (before, --aia was ignored there).
        let config = try TestScratch.folder("aia-config") + "/trust.json"
        try #"{"version": 1, "hosts": [{"host": "good.lab.test", "anchors": {"certificates": ["\#(CLI.lab)/roots.pem"], "replaceSystem": true}}]}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let configured = ["evaluate", "--chain", leafPEM, "--host", "good.lab.test", "--config", config, "--json"]
        let (offline, offlineOut, _) = try await run(CLI.binary, configured)
        #expect(offline == 1, "\(offlineOut)")
        #expect(publisher.requestCount("issuing.der") == 1)
        let (completed, completedOut, completedErr) = try await run(CLI.binary, configured + ["--aia"])
        #expect(completed == 0, "\(completedOut) \(completedErr)")
        #expect(completedOut.contains("fetched"), "\(completedOut)")
        #expect(publisher.requestCount("issuing.der") == 2)
        try await server.shutdown()
        await publisher.shutdown()
    }
}

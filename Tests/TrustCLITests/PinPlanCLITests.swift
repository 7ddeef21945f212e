import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport
import X509

/// `trust pin --plan URL` and `trust check-config --chain FILE --host HOST`: pins judged on the validated path, the
/// set that survives renewal, and one lab chain for each warning code.
@Suite("Pin plans and pin-set warnings", .serialized, .timeLimit(.minutes(5)), .paced)
struct PinPlanCLITests {
    private static func document(_ output: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
    }

    private static func codes(_ warnings: Any?) -> [String] {
        ((warnings as? [[String: Any]]) ?? []).compactMap { $0["code"] as? String }
    }

    private func plan(_ server: LabServer, _ extra: [String]) async throws -> (Int32, String, String) {
        try await run(CLI.binary, ["pin", "--plan", server.baseURL, "--resolve", "\(server.host):\(server.port):127.0.0.1"] + extra)
    }

    @Test func aPlanPinsTheIssuingCAWithTheRootAsBackup() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let (status, output, error) = try await plan(server, ["--cacert", CLI.lab + "/roots.pem", "--json"])
        #expect(status == 0, "\(error)")
        let document = try Self.document(output)
        let path = try #require(document["validatedPath"] as? [[String: Any]])
        #expect(path.compactMap { $0["role"] as? String } == ["leaf", "intermediate", "root"])
        let recommended = try #require(document["recommended"] as? [[String: Any]]).compactMap { $0["pin"] as? String }
        let intermediate = Lab.pki.intermediate.certificate
        let root = Lab.pki.root.certificate
        #expect(recommended == [intermediate.spkiPin.description, root.spkiPin.description])
        #expect(Self.codes(document["warnings"]).isEmpty)
        // The expiry to give the set: when the first pinned certificate ends.
        let expires = try #require(document["expiresNoLaterThan"] as? String)
        #expect(expires == RFC3339.string(min(intermediate.notValidAfter, root.notValidAfter)))
        // The text says the same, with the 2026–2029 lifetimes.
        let (_, text, _) = try await plan(server, ["--cacert", CLI.lab + "/roots.pem"])
        #expect(text.contains("Recommended pin set") && text.contains(intermediate.spkiPin.description) && text.contains("47 from 2029-03-15"))
        try await server.shutdown()
    }

    @Test func aSelfSignedServerPinsItsOwnKeyAndNeedsABackupKey() async throws {
        let server = try await LabServer.start("self-signed", pki: Lab.pki)
        let (status, output, error) = try await plan(server, ["--cacert", CLI.lab + "/self-signed/cert.pem", "--anchors-only", "--json"])
        #expect(status == 0, "\(error)")
        let document = try Self.document(output)
        let recommended = try #require(document["recommended"] as? [[String: Any]])
        #expect(recommended.count == 2 && recommended[1]["pin"] == nil)
        #expect(Self.codes(document["warnings"]) == ["single-pin"])
        try await server.shutdown()
    }

    @Test func anUntrustedChainHasNoPlan() async throws {
        let server = try await LabServer.start("untrusted-root", pki: Lab.pki)
        let (status, _, error) = try await plan(server, ["--cacert", CLI.lab + "/roots.pem"])
        #expect(status == 1)
        #expect(error.contains("no pin set can be planned"))
        try await server.shutdown()
    }

    /// A configuration for good.lab.test with `pins` (and `expires`), judged against the lab's good chain.
    private func judge(pins: [Certificate], expires: Date?, allowSinglePin: Bool = true) async throws -> (Int32, [String: Any]) {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var pinSet: [String: Any] = ["sha256": pins.map(\.spkiPin.description), "allowSinglePin": allowSinglePin]
        if let expires { pinSet["expires"] = RFC3339.string(expires) }
        let configuration: [String: Any] = [
            "version": 1,
            "hosts": [["host": "good.lab.test", "anchors": ["certificates": [CLI.lab + "/roots.pem"], "replaceSystem": true], "pins": pinSet]],
        ]
        let file = folder + "/trust.json"
        try JSONSerialization.data(withJSONObject: configuration).write(to: URL(fileURLWithPath: file))
        let (status, output, error) = try await run(
            CLI.binary, ["check-config", file, "--chain", CLI.lab + "/good/chain.pem", "--host", "good.lab.test", "--json"])
        let document = try Self.document(output)
        #expect(document["valid"] as? Bool == true, "\(error)")
        return (status, try #require(document["chain"] as? [String: Any]))
    }

    @Test func eachWarningHasAChainThatShowsIt() async throws {
        let leaf = Lab.chain("good")[0]
        let intermediate = Lab.pki.intermediate.certificate
        let root = Lab.pki.root.certificate
        let soon = min(intermediate.notValidAfter, root.notValidAfter).addingTimeInterval(-86_400)
        // The leaf alone, for ever: every warning.
        let (leafStatus, leafOnly) = try await judge(pins: [leaf], expires: nil)
        #expect(leafStatus == 0)
        #expect(Self.codes(leafOnly["warnings"]) == ["single-pin", "leaf-only-pin", "no-ca-backup", "pin-outlives-certificate"])
        let matches = try #require(leafOnly["matches"] as? [[String: Any]])
        #expect(matches.first?["index"] as? Int == 0 && matches.first?["role"] as? String == "leaf")
        // The issuing CA alone: no backup, and the root not pinned.
        let (_, caOnly) = try await judge(pins: [intermediate], expires: soon)
        #expect(Self.codes(caOnly["warnings"]) == ["single-pin", "no-ca-backup"])
        // The CA and the root, enforced past the CA certificate's end.
        let (_, outlives) = try await judge(pins: [intermediate, root], expires: intermediate.notValidAfter.addingTimeInterval(86_400))
        #expect(Self.codes(outlives["warnings"]).contains("pin-outlives-certificate"))
        // The CA and the root, expiring in time: nothing to say.
        let (fineStatus, fine) = try await judge(pins: [intermediate, root], expires: soon)
        #expect(fineStatus == 0 && Self.codes(fine["warnings"]).isEmpty)
        // A pin set the chain does not match: refused, exit 1, and the pin matches no certificate of the path.
        let other = try CertificateSource.certificates(atPath: CLI.lab + "/other-root.pem")
        let (mismatchStatus, mismatch) = try await judge(pins: other, expires: soon)
        #expect(mismatchStatus == 1 && mismatch["trusted"] as? Bool == false)
        #expect((mismatch["reasons"] as? [String])?.contains("pin-mismatch") == true)
        #expect((mismatch["matches"] as? [[String: Any]])?.first?["index"] == nil)
    }
}

import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// The `trust` CLI's flags and exit codes are a contract; these run the built binary.
@Suite("trust CLI contract", .paced)
struct CLITests {
    @Test func pinPrintsOneLinePerCertificateAndJSON() async throws {
        let (status, out, _) = try await run(CLI.binary, ["pin", CLI.lab + "/good/chain.pem"])
        #expect(status == 0)
        let lines = out.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix(Lab.chain("good")[0].spkiPin.description + "  ") == true)
        let (jsonStatus, json, _) = try await run(CLI.binary, ["pin", "--json", CLI.lab + "/root.pem"])
        #expect(jsonStatus == 0)
        let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: String]]
        #expect(parsed?.first?["pin"] == Lab.pki.root.certificate.spkiPin.description)
        #expect(parsed?.first?["subject"] != nil)
    }

    @Test func evaluateExitCodes() async throws {
        let base = ["evaluate", "--anchors", CLI.lab + "/roots.pem", "--anchors-only"]
        #expect(try await run(CLI.binary, base + ["--chain", CLI.lab + "/good/chain.pem", "--host", "good.lab.test"]).0 == 0)
        #expect(try await run(CLI.binary, base + ["--chain", CLI.lab + "/good/chain.pem", "--ip", "127.0.0.1"]).0 == 0)
        let (status, out, _) = try await run(CLI.binary, base + ["--chain", CLI.lab + "/expired/chain.pem", "--host", "expired.lab.test"])
        #expect(status == 1)
        #expect(out.contains("[expired]"))
        // Bad usage and unreadable input: 2.
        #expect(try await run(CLI.binary, base + ["--chain", CLI.lab + "/good/chain.pem"]).0 == 2)
        #expect(try await run(CLI.binary, base + ["--chain", "/nonexistent.pem", "--host", "x.test"]).0 == 2)
        #expect(try await run(CLI.binary, base + ["--chain", CLI.lab + "/good/chain.pem", "--host", "good.lab.test", "--pin", "sha256/short"]).0 == 2)
        #expect(try await run(CLI.binary, base + ["--chain", CLI.lab + "/good/chain.pem", "--host", "good.lab.test", "--at", "yesterday"]).0 == 2)
        #expect(try await run(CLI.binary, base + ["--chain", CLI.lab + "/good/chain.pem", "--host", "good.lab.test", "--no-such-flag"]).0 == 2)
    }

    @Test func evaluateJSONCarriesReasonsPathsAndPins() async throws {
        let pin = Lab.pki.intermediate.certificate.spkiPin.description
        let (status, out, _) = try await run(
            CLI.binary,
            [
                "evaluate", "--chain", CLI.lab + "/mitm/chain.pem", "--anchors", CLI.lab + "/roots.pem", "--anchors-only",
                "--host", "good.lab.test", "--pin", pin, "--json",
            ])
        #expect(status == 1)
        let object = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any]
        #expect(object?["trusted"] as? Bool == false)
        let reasons = object?["reasons"] as? [[String: String]]
        #expect(reasons?.first?["code"] == "pin-mismatch")
        #expect(object?["expectedPins"] as? [String] == [pin])
        #expect((object?["presentedChain"] as? [Any])?.count == 2)
    }

    @Test func evaluateAtAFixedTimeAndInAFNetworkingModes() async throws {
        let good = Lab.chain("good")[0]
        let after = RFC3339.string(good.notValidAfter.addingTimeInterval(1))
        let base = ["evaluate", "--chain", CLI.lab + "/good/chain.pem", "--anchors", CLI.lab + "/roots.pem", "--anchors-only", "--host", "good.lab.test"]
        #expect(try await run(CLI.binary, base + ["--at", after]).0 == 1)
        #expect(try await run(CLI.binary, base + ["--mode", "certificate", "--pinned-cert", CLI.lab + "/intermediate.pem"]).0 == 0)
        #expect(
            try await run(
                CLI.binary,
                [
                    "evaluate", "--chain", CLI.lab + "/self-signed/chain.pem", "--host", "self-signed.lab.test",
                    "--mode", "public-key", "--pinned-cert", CLI.lab + "/self-signed/cert.pem", "--allow-invalid",
                ]
            ).0 == 0)
        #expect(
            try await run(
                CLI.binary,
                [
                    "evaluate", "--chain", CLI.lab + "/self-signed/chain.pem", "--host", "self-signed.lab.test",
                    "--mode", "none", "--allow-invalid",
                ]
            ).0 == 1)
        #expect(try await run(CLI.binary, base + ["--allow-invalid"]).0 == 2)
    }
}

/// Certificates made by another tool (openssl) in forms the engine refuses still get a pin, and are
/// refused with a reason (exit 1), not reported as unreadable (exit 2).
@Suite("trust CLI with openssl-made certificates", .paced)
struct OpenSSLInteropTests {
    static let openssl = "/usr/bin/openssl"

    func make(_ name: String, _ arguments: [String]) async throws -> String {
        let dir = try temporaryDirectory()
        let path = dir + "/\(name).pem"
        let (status, _, err) = try await run(
            Self.openssl,
            [
                "req", "-x509", "-nodes", "-keyout", dir + "/key.pem", "-out", path, "-days", "30",
                "-subj", "/CN=\(name).test", "-addext", "subjectAltName=DNS:\(name).test",
            ] + arguments)
        #expect(status == 0, "\(err)")
        return path
    }

    func opensslPin(_ path: String) async throws -> String {
        let (_, out, _) = try await run(
            "/bin/sh",
            [
                "-c",
                "\(Self.openssl) x509 -in \(path) -pubkey -noout | \(Self.openssl) pkey -pubin -outform der | \(Self.openssl) dgst -sha256 -binary | base64",
            ])
        return "sha256/" + out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(
        .requires(.openssl),
        arguments: [
            ("rsa1024", ["-newkey", "rsa:1024"], "weak-key"),
            ("md5", ["-newkey", "rsa:2048", "-md5"], "weak-signature-algorithm"),
            ("pss", ["-newkey", "rsa-pss", "-pkeyopt", "rsa_keygen_bits:2048"], "weak-key"),
            ("p256", ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"], ""),
            ("ed25519", ["-newkey", "ed25519"], ""),
        ])
    func pinAndEvaluate(_ name: String, _ arguments: [String], _ expectedReason: String) async throws {
        let path = try await make(name, arguments)
        let (pinStatus, pinOut, _) = try await run(CLI.binary, ["pin", path])
        #expect(pinStatus == 0)
        #expect(pinOut.split(separator: " ").first.map(String.init) == (try await opensslPin(path)))
        let (status, out, _) = try await run(
            CLI.binary, ["evaluate", "--chain", path, "--anchors", path, "--anchors-only", "--host", "\(name).test", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any]
        let codes = (object?["reasons"] as? [[String: String]])?.compactMap { $0["code"] } ?? []
        if expectedReason.isEmpty {
            // A self-signed leaf pinned as its own anchor, made by openssl: trusted.
            #expect(status == 0, "\(codes)")
        } else {
            #expect(status == 1)
            #expect(codes.first == expectedReason)
        }
    }

    /// The README's main command: every scenario of the embedded lab as expected.
    @Test func demoRunsTheWholeMatrixAsExpected() async throws {
        let (status, out, err) = try await run(CLI.binary, ["demo"])
        #expect(status == 0, "\(out)\n\(err)")
        #expect(out.contains("37 of 37 outcomes as expected"), "\(out)")
        #expect(!out.contains("✗"))
        // The live-trust rows: a reload swapped in, a replayed bundle refused by type, a peer known by SPIFFE ID.
        for why in ["reloaded: generation 2\n", "bundle 1 refused [rollback]: ", "trusted as spiffe://lab.test/ns/demo/sa/api\n"] {
            #expect(out.contains(why), "\(why): \(out)")
        }
    }

    /// `trust lab` serves until interrupted; what it prints is enough to reach a server with curl.
    @Test func labServesUntilInterrupted() async throws {
        let dir = try temporaryDirectory()
        let outPath = dir + "/out.txt"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = ["lab", "--dir", dir + "/lab"]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { stop(process) }
        var line: Substring?
        for _ in 0..<100 where line == nil {
            let text = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
            line = text.split(separator: "\n").first { $0.contains("try:  curl") }
            if line == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let command = try #require(line).replacingOccurrences(of: "try:", with: "").trimmingCharacters(in: .whitespaces)
        let (status, body, err) = try await run("/bin/sh", ["-c", command + " -sS"])
        #expect(status == 0, "\(command): \(err)")
        #expect(body == "hello from good\n")
        kill(process.processIdentifier, SIGINT)
        #expect(await exited(process) == 0)
        #expect(((try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "").contains("stopping the lab"))
    }
}

import Foundation
import Testing
import Trust
import TrustTestSupport

@Suite("trust config keygen, sign and verify", .timeLimit(.minutes(5)), .paced)
struct ConfigSigningCLITests {
    static let bundleText = """
        {"bundleVersion": 1, "sequence": 3, "expires": "2099-01-01T00:00:00Z",
         "configuration": {"version": 1, "base": {"minimumRSABits": 3072}}}

        """

    @Test func signAndVerifyRoundTripAndATamperedFileIsRefused() async throws {
        let dir = try temporaryDirectory()
        let (made, out, err) = try await run(CLI.binary, ["config", "keygen", "--out", dir + "/keys"])
        #expect(made == 0, "\(err)")
        let key = dir + "/keys/signing.key"
        let publicKey = dir + "/keys/signing.pub"
        var status = stat()
        #expect(stat(key, &status) == 0 && status.st_mode & 0o777 == 0o600, "the private key is private")
        let pem = try String(contentsOfFile: key, encoding: .utf8)
        let secret = pem.split(separator: "\n")[1]
        #expect(out.contains("public key ed25519:") && !out.contains(secret), "\(out)")
        // A second keygen never replaces the key.
        #expect(try await run(CLI.binary, ["config", "keygen", "--out", dir + "/keys"]).0 == 2)

        let bundle = dir + "/trust-bundle.json"
        try Self.bundleText.write(toFile: bundle, atomically: true, encoding: .utf8)
        let (signed, signOut, signErr) = try await run(CLI.binary, ["config", "sign", "--key", key, bundle])
        #expect(signed == 0, "\(signErr)")
        #expect(!signOut.contains(secret) && !signErr.contains(secret))
        let signature = try String(contentsOfFile: bundle + ".sig", encoding: .utf8)
        #expect(signature.count == 89 && signature.hasSuffix("\n"), "one line of base64: \(signature)")

        let (valid, validOut, validErr) = try await run(CLI.binary, ["config", "verify", "--pub", publicKey, bundle])
        #expect(valid == 0, "\(validErr)")
        #expect(validOut.contains("valid (sequence 3"), "\(validOut)")
        // A rollback, against the last accepted sequence.
        let (rolledBack, _, why) = try await run(CLI.binary, ["config", "verify", "--pub", publicKey, "--after-sequence", "3", bundle])
        #expect(rolledBack == 1 && why.contains("not above the last accepted"), "\(why)")

        // One byte changed: the signature no longer verifies, exit 1 with the reason.
        try Self.bundleText.replacingOccurrences(of: "3072", with: "2048").write(toFile: bundle, atomically: true, encoding: .utf8)
        let (tampered, _, tamperedErr) = try await run(CLI.binary, ["config", "verify", "--pub", publicKey, bundle])
        #expect(tampered == 1, "\(tamperedErr)")
        #expect(tamperedErr.contains("signature is not valid"), "\(tamperedErr)")
        // Another key: refused the same way.
        let (otherMade, _, _) = try await run(CLI.binary, ["config", "keygen", "--out", dir + "/other"])
        #expect(otherMade == 0)
        try Self.bundleText.write(toFile: bundle, atomically: true, encoding: .utf8)
        #expect(try await run(CLI.binary, ["config", "verify", "--pub", dir + "/other/signing.pub", bundle]).0 == 1)
        // Both keys (a rotation): valid.
        #expect(try await run(CLI.binary, ["config", "verify", "--pub", dir + "/other/signing.pub", "--pub", publicKey, bundle]).0 == 0)
    }

    /// Several `keygen` runs at once into one new folder: exactly one writes the pair and says so, every other is
    /// refused (exit 2, "already exists"), the key it printed is the one on disk, and signing.key and signing.pub are
    /// a pair. Before the names were taken with link(2), the runs all passed a check for the names and renamed their
    /// files over each other: two to six of six printed a key, and in some rounds the files on disk did not match.
    @Test func concurrentKeygensLeaveOnePairAndOneWinner() async throws {
        let runs = 8
        for round in 1...4 {
            let dir = try temporaryDirectory() + "/keys"
            try Self.startTogether(runs, [CLI.binary, "config", "keygen", "--out", dir], outputs: dir)
            var winners: [String] = []
            for index in 1...runs {
                let out = try String(contentsOfFile: "\(dir).out.\(index)", encoding: .utf8)
                let err = try String(contentsOfFile: "\(dir).err.\(index)", encoding: .utf8)
                if let line = out.split(separator: "\n").first(where: { $0.hasPrefix("public key ") }) {
                    winners.append(String(line.split(separator: " ").last ?? ""))
                    #expect(err.isEmpty, "round \(round), run \(index): \(err)")
                } else {
                    #expect(err.contains("already exists: a key is never replaced") && out.isEmpty, "round \(round), run \(index): \(out) \(err)")
                }
            }
            #expect(winners.count == 1, "round \(round): \(winners.count) runs printed a key")
            let key = try TrustConfigurationSigningKey(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/signing.key"))))
            let publicKey = try TrustConfigurationPublicKey(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/signing.pub"))))
            #expect(key.publicKey.base64 == publicKey.base64, "round \(round): signing.key and signing.pub are not a pair")
            #expect(winners == [publicKey.base64], "round \(round): printed \(winners), on disk \(publicKey.base64)")
            // Nothing else is left in the folder (no temporary file of a run that lost).
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["signing.key", "signing.pub"])
        }
    }

    /// Starts `count` copies of `command` one right after the other (posix_spawn: well under a millisecond apart, a
    /// key's write and fsync take longer), each writing to `PREFIX.out.N` and `PREFIX.err.N`, and waits for all.
    static func startTogether(_ count: Int, _ command: [String], outputs prefix: String) throws {
        var processes: [Process] = []
        for index in 1...count {
            _ = FileManager.default.createFile(atPath: "\(prefix).out.\(index)", contents: nil)
            _ = FileManager.default.createFile(atPath: "\(prefix).err.\(index)", contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(prefix).out.\(index)"))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(prefix).err.\(index)"))
            processes.append(process)
        }
        for process in processes { try process.run() }
        for process in processes {
            process.waitUntilExit()
            try (process.standardOutput as? FileHandle)?.close()
            try (process.standardError as? FileHandle)?.close()
        }
    }

    /// A folder that holds a signing.key without signing.pub (or the other way round) is refused and left as it was.
    @Test func aHalfPairIsNeverCompleted() async throws {
        for existing in ["signing.key", "signing.pub"] {
            let dir = try temporaryDirectory()
            try "not a key\n".write(toFile: dir + "/" + existing, atomically: true, encoding: .utf8)
            let (status, out, err) = try await run(CLI.binary, ["config", "keygen", "--out", dir])
            #expect(status == 2 && err.contains("\(existing) already exists") && !out.contains("public key"), "\(existing): \(out) \(err)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == [existing], "\(existing)")
            #expect(try String(contentsOfFile: dir + "/" + existing, encoding: .utf8) == "not a key\n")
        }
    }

    /// A bundle whose configuration uses TrustNIO's members (`minimumTLSVersion`, `clientIdentity`) is signed and
    /// verified: both commands read it as a session would.
    @Test func aBundleWithTransportMembersIsSignedAndVerified() async throws {
        let dir = try temporaryDirectory()
        #expect(try await run(CLI.binary, ["config", "keygen", "--out", dir]).0 == 0)
        let bundle = dir + "/bundle.json"
        try """
        {"bundleVersion": 1, "sequence": 1, "expires": "2099-01-01T00:00:00Z",
         "configuration": {"version": 1, "base": {"minimumTLSVersion": "1.3", "clientIdentity": {"pkcs12": "id.p12"}}}}
        """.write(toFile: bundle, atomically: true, encoding: .utf8)
        let (signed, _, signErr) = try await run(CLI.binary, ["config", "sign", "--key", dir + "/signing.key", bundle])
        #expect(signed == 0, "\(signErr)")
        let (valid, _, validErr) = try await run(CLI.binary, ["config", "verify", "--pub", dir + "/signing.pub", bundle])
        #expect(valid == 0, "\(validErr)")
    }

    @Test func keysAndBundlesAreChecked() async throws {
        let dir = try temporaryDirectory()
        #expect(try await run(CLI.binary, ["config", "keygen", "--out", dir]).0 == 0)
        let bundle = dir + "/bundle.json"
        // An invalid bundle is not signed: exit 1, with each problem's path.
        try #"{"bundleVersion": 1, "sequence": 1, "configuration": {"version": 1}}"#.write(toFile: bundle, atomically: true, encoding: .utf8)
        let (invalid, _, problems) = try await run(CLI.binary, ["config", "sign", "--key", dir + "/signing.key", bundle])
        #expect(invalid == 1 && problems.contains("$.expires"), "\(problems)")
        #expect(!FileManager.default.fileExists(atPath: bundle + ".sig"))
        // A private key others can read is refused (exit 2), as ssh refuses one.
        try Self.bundleText.write(toFile: bundle, atomically: true, encoding: .utf8)
        chmod(dir + "/signing.key", 0o644)
        let (exposed, _, why) = try await run(CLI.binary, ["config", "sign", "--key", dir + "/signing.key", bundle])
        #expect(exposed == 2 && why.contains("chmod 600"), "\(why)")
        // No signature file, or none given: exit 2 (unreadable input), as in every command.
        #expect(try await run(CLI.binary, ["config", "verify", "--pub", dir + "/signing.pub", bundle]).0 == 2)
        #expect(try await run(CLI.binary, ["config", "verify", bundle]).0 == 2)
        // check-config keeps its name and meaning: a bundle is not a configuration file.
        #expect(try await run(CLI.binary, ["check-config", bundle]).0 == 1)
    }

    /// OpenSSL's Ed25519 keys and raw signatures (RFC 8410 PEM, `pkeyutl -rawin`) are read as they are, and OpenSSL
    /// verifies what `trust config sign` writes.
    @Test(.requires(.openssl)) func interoperatesWithOpenSSL() async throws {
        let dir = try temporaryDirectory()
        let openssl = ExternalTool.openssl.path
        #expect(try await run(openssl, ["genpkey", "-algorithm", "ed25519", "-out", dir + "/k.pem"]).0 == 0)
        chmod(dir + "/k.pem", 0o600)
        #expect(try await run(openssl, ["pkey", "-in", dir + "/k.pem", "-pubout", "-out", dir + "/p.pem"]).0 == 0)
        let bundle = dir + "/b.json"
        try Self.bundleText.write(toFile: bundle, atomically: true, encoding: .utf8)
        #expect(try await run(openssl, ["pkeyutl", "-sign", "-inkey", dir + "/k.pem", "-rawin", "-in", bundle, "-out", dir + "/b.raw"]).0 == 0)
        let (valid, _, err) = try await run(CLI.binary, ["config", "verify", "--pub", dir + "/p.pem", "--signature", dir + "/b.raw", bundle])
        #expect(valid == 0, "\(err)")
        #expect(try await run(CLI.binary, ["config", "sign", "--key", dir + "/k.pem", bundle]).0 == 0)
        #expect(try await run(openssl, ["base64", "-d", "-A", "-in", bundle + ".sig", "-out", dir + "/b.sig.raw"]).0 == 0)
        let (verified, out, _) = try await run(
            openssl, ["pkeyutl", "-verify", "-pubin", "-inkey", dir + "/p.pem", "-rawin", "-in", bundle, "-sigfile", dir + "/b.sig.raw"])
        #expect(verified == 0 && out.contains("Verified"), "\(out)")
    }
}

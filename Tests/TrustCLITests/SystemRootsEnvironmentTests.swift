import Foundation
import Testing
import TrustHTTPTestSupport
import TrustTestSupport

/// `SSL_CERT_FILE` and `SSL_CERT_DIR` choose the system roots, as in OpenSSL: read once per process,
/// so each case runs `trust evaluate` (no `--anchors`: the system roots are the anchors) in a child.
@Suite("System roots from SSL_CERT_FILE and SSL_CERT_DIR", .paced)
struct SystemRootsEnvironmentTests {
    private func evaluate(_ environment: [String]) async throws -> (Int32, String, String) {
        try await run("/usr/bin/env", environment + [CLI.binary, "evaluate", "--chain", CLI.lab + "/good/chain.pem", "--host", "good.lab.test"])
    }

    @Test func theVariablesReplaceOrExtendTheBundle() async throws {
        // The lab's root is in no system bundle: refused.
        let (refused, _, _) = try await evaluate(["-u", "SSL_CERT_FILE", "-u", "SSL_CERT_DIR"])
        #expect(refused == 1)
        // SSL_CERT_FILE names the bundle: the lab's roots are the system roots.
        let (byFile, out, err) = try await evaluate(["-u", "SSL_CERT_DIR", "SSL_CERT_FILE=" + CLI.lab + "/roots.pem"])
        #expect(byFile == 0, "\(out)\(err)")
        // SSL_CERT_DIR adds a folder of PEM files (here beside a file that is no certificate).
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.copyItem(atPath: CLI.lab + "/roots.pem", toPath: folder + "/1a2b3c4d.0")
        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: folder + "/README"))
        let (byDirectory, out2, err2) = try await evaluate(["-u", "SSL_CERT_FILE", "SSL_CERT_DIR=/nonexistent:" + folder])
        #expect(byDirectory == 0, "\(out2)\(err2)")
        // Beside a named file, a folder is not read (see SystemRoots).
        let (both, _, _) = try await evaluate(["SSL_CERT_FILE=/nonexistent/bundle.pem", "SSL_CERT_DIR=" + folder])
        #expect(both == 1)
        // A variable naming nothing readable falls back to the usual bundle: refused again, no crash.
        let (fallback, _, _) = try await evaluate(["-u", "SSL_CERT_DIR", "SSL_CERT_FILE=/nonexistent/bundle.pem"])
        #expect(fallback == 1)
    }
}

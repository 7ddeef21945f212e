import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// `trust get` against a server whose response field value holds terminal controls (an OSC title change,
/// a clear-screen, BEL, BS): curl's CURLE_WEIRD_SERVER_REPLY (exit 8) over HTTP/1.1 and HTTP/2 alike, and
/// neither `-v` (stderr) nor `-i` (stdout) writes one of them raw.
@Suite("trust get: control characters in a header value, exit 8 over both versions", .serialized, .timeLimit(.minutes(5)), .paced)
struct HeaderControlCharactersCLITests {
    static let good = Lab.pki.servers["good"]!

    /// `-v` shows header values escaped, so a secret the server echoes is matched in its escaped form too:
    /// a password with backslashes in a `location` field is still `***` (it showed as `pa\\ss\\word-1`).
    @Test func anEchoedSecretIsScrubbedOnceEscaped() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        try await withTeardown({ try? await server.shutdown() }) {
            let (code, _, err) = try await run(
                CLI.binary,
                [
                    "get", server.baseURL + "/redirect?status=300&to=/x%5Cpa%5Css%5Cword-1", "--resolve", "good.lab.test:\(server.port):127.0.0.1",
                    "--cacert", CLI.lab + "/roots.pem", "-u", "alice:pa\\ss\\word-1", "-v", "-o", "/dev/null", "-s", "-S",
                ])
            #expect(code == 0, "\(err)")
            let location = err.split(separator: "\n").first { $0.contains("< location:") }.map(String.init) ?? ""
            #expect(location == "trust: < location: /x\\\\***", "\(err)")
            #expect(!err.contains("word-1"), "\(err)")
        }
    }

    @Test(arguments: [LabHostileServer.Behaviour.controlCharactersInHeader, .controlCharactersInHTTP2Header])
    func exitsEightWithNothingRaw(_ behaviour: LabHostileServer.Behaviour) async throws {
        let server = try await LabHostileServer.start(behaviour, host: "good.lab.test", chain: Self.good.chain, privateKey: Self.good.privateKey)
        try await withTeardown({ await server.shutdown() }) {
            for flags in [["-v"], ["-i"], ["-v", "-i"]] {
                let (code, out, err) = try await run(
                    CLI.binary,
                    [
                        "get", server.baseURL + "/", "--resolve", "good.lab.test:\(server.port):127.0.0.1",
                        "--cacert", CLI.lab + "/roots.pem", "-s", "-S",
                    ] + flags)
                #expect(code == 8, "\(behaviour.rawValue) \(flags): exit \(code)\n\(err)")
                #expect(
                    !out.contains("\u{1B}") && !out.contains("\u{07}") && !out.contains("\u{08}"),
                    "\(behaviour.rawValue) \(flags): stdout \(out.debugDescription)")
                HostileNames.expectNoRawControl(err, "\(behaviour.rawValue) \(flags) stderr")
            }
        }
    }
}

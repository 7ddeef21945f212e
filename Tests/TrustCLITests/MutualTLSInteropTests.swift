import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustNIO
import TrustTestSupport

/// Mutual TLS with implementations we did not write: openssl's server and client.
@Suite("Mutual TLS interoperability with openssl", .serialized, .timeLimit(.minutes(5)), .paced)
struct MutualTLSInteropTests {
    static let openssl = "/usr/bin/openssl"

    func p12(_ options: [String], password: String) async throws -> String {
        let f = Lab.clientIdentityFiles
        let out = f.dir + "/\(UUID().uuidString).p12"
        let (status, _, err) = try await run(
            Self.openssl, ["pkcs12", "-export", "-in", f.cert, "-inkey", f.key, "-certfile", f.chain, "-out", out, "-passout", "pass:\(password)"] + options)
        #expect(status == 0, "\(err)")
        return out
    }

    @Test(.requires(.openssl)) func ourClientAgainstOpenSSLServer() async throws {
        let lab = CLI.lab
        let (server, port) = try await startOpenSSLServer([
            "-cert", lab + "/good/cert.pem", "-cert_chain", lab + "/intermediate.pem",
            "-key", lab + "/good/key.pem", "-Verify", "1", "-verify_return_error", "-CAfile", lab + "/root.pem", "-www",
        ])
        defer { stop(server) }
        let base = ["get", "https://good.lab.test:\(port)/", "--resolve", "good.lab.test:\(port):127.0.0.1", "--cacert", lab + "/roots.pem", "-o", "/dev/null"]
        let withoutCert = try await run(CLI.binary, base).0
        #expect(withoutCert == 35)  // the server requires a certificate
        for options in [[], ["-legacy"]] {
            let file = try await p12(options, password: "secret")
            let (status, _, err) = try await run(CLI.binary, base + ["--cert", file, "--cert-password", "secret"])
            #expect(status == 0, "\(options): \(err)")
            #expect(try await run(CLI.binary, base + ["--cert", file, "--cert-password", "wrong"]).0 == 58)
        }
        // curl's spellings: FILE:PASSWORD, --pass, and --cert-type for a file whose name says nothing.
        let p12 = try await p12([], password: "secret")
        #expect(try await run(CLI.binary, base + ["--cert", p12 + ":secret"]).0 == 0)
        #expect(try await run(CLI.binary, base + ["--cert", p12 + ":wrong"]).0 == 58)
        let unnamed = Lab.clientIdentityFiles.dir + "/identity.bin"
        try FileManager.default.copyItem(atPath: p12, toPath: unnamed)
        #expect(try await run(CLI.binary, base + ["--cert", unnamed, "--cert-type", "P12", "--pass", "secret"]).0 == 0)
        #expect(try await run(CLI.binary, base + ["--cert", unnamed, "--cert-type", "JKS", "--pass", "secret"]).0 == 2)
        let f = Lab.clientIdentityFiles
        // PEM: the chain file (leaf + intermediate) and the key; the leaf alone cannot reach the server's CA.
        let fullChain = f.dir + "/fullchain.pem"
        try (String(contentsOfFile: f.cert, encoding: .utf8) + String(contentsOfFile: f.chain, encoding: .utf8)).write(
            toFile: fullChain, atomically: true, encoding: .utf8)
        #expect(try await run(CLI.binary, base + ["--cert", fullChain, "--key", f.key]).0 == 0)
        #expect(try await run(CLI.binary, base + ["--cert", f.cert, "--key", f.key]).0 == 35)
        // A certificate from a CA the server does not trust is refused by the server: 35.
        let stranger = try Lab.pki.untrustedRoot.leaf(commonName: "stranger", extendedKeyUsage: [.clientAuth])
        let strangerCert = f.dir + "/stranger.pem"
        let strangerKey = f.dir + "/stranger-key.pem"
        try stranger.certificatePEM.write(toFile: strangerCert, atomically: true, encoding: .utf8)
        try stranger.privateKeyPEM.write(toFile: strangerKey, atomically: true, encoding: .utf8)
        #expect(try await run(CLI.binary, base + ["--cert", strangerCert, "--key", strangerKey]).0 == 35)
        // A local problem (no key in the file) is 58.
        #expect(try await run(CLI.binary, base + ["--cert", f.cert]).0 == 58)
        // The lab's bad client identities (expired, serverAuth-only EKU, foreign CA): openssl refuses each: 35.
        for name in ["client-expired", "client-server-eku", "client-foreign"] {
            let files = lab + "/clients/" + name
            let (status, _, err) = try await run(CLI.binary, base + ["--cert", files + "/chain.pem", "--key", files + "/key.pem"])
            #expect(status == 35, "\(name): \(err)")
        }
        #expect(try await run(CLI.binary, base + ["--cert", lab + "/clients/client/chain.pem", "--key", lab + "/clients/client/key.pem"]).0 == 0)
    }

    @Test(.requires(.openssl)) func openSSLClientAgainstOurServer() async throws {
        let good = Lab.pki.servers["good"]!
        let server = try await LabServer.start(
            name: "mtls", host: "good.lab.test", chain: good.chain, privateKey: good.privateKey, protocols: .http1Only,
            clientAuthentication: ClientAuthentication(requirement: .required, anchors: [Lab.pki.root.certificate]))
        try await withTeardown({ try? await server.shutdown() }) {
            let f = Lab.clientIdentityFiles
            func sClient(_ extra: [String]) async throws -> String {
                let request = "GET /whoami HTTP/1.1\r\nHost: good.lab.test\r\nConnection: close\r\n\r\n"
                let (_, out, err) = try await run(
                    Self.openssl,
                    [
                        "s_client", "-connect", "127.0.0.1:\(server.port)", "-servername", "good.lab.test",
                        "-CAfile", CLI.lab + "/roots.pem", "-quiet", "-ign_eof",
                    ] + extra, stdin: request)
                return out + err
            }
            let accepted = try await sClient(["-cert", f.cert, "-key", f.key, "-cert_chain", f.chain])
            #expect(accepted.contains("client: ") && accepted.contains("lab client"), "\(accepted)")
            let refused = try await sClient([])
            #expect(!refused.contains("client: "))
            #expect(refused.lowercased().contains("alert"), "\(refused)")
            // Expired, serverAuth-only and foreign-CA client certificates: each refused with an alert.
            for name in ["client-expired", "client-server-eku", "client-foreign"] {
                let files = CLI.lab + "/clients/" + name
                let output = try await sClient(["-cert", files + "/cert.pem", "-key", files + "/key.pem", "-cert_chain", files + "/chain.pem"])
                #expect(!output.contains("client: ") && output.lowercased().contains("alert"), "\(name): \(output)")
            }
        }
    }
}

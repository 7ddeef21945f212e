import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// `trust get`: curl's exit codes, against lab servers and against openssl's own TLS server.
@Suite("trust get CLI contract", .serialized, .timeLimit(.minutes(5)), .paced)
struct GetCommandTests {
    func get(_ server: LabServer, _ path: String = "/", _ extra: [String] = []) async throws -> (Int32, String, String) {
        try await run(
            CLI.binary, ["get", server.baseURL + path, "--resolve", "\(server.host):\(server.port):127.0.0.1", "--cacert", CLI.lab + "/roots.pem"] + extra)
    }

    @Test func exitCodesFollowCurl() async throws {
        try await withLabServers(["good", "expired", "wrong-host", "mitm", "self-signed"]) { servers in
            let (ok, body, _) = try await get(servers["good"]!)
            #expect(ok == 0)
            #expect(body == "hello from good\n")
            let (expired, _, expiredErr) = try await get(servers["expired"]!)
            #expect(expired == 60)
            #expect(expiredErr.contains("[expired]"))
            #expect(try await get(servers["wrong-host"]!).0 == 60)
            #expect(try await get(servers["self-signed"]!).0 == 60)
            let pin = Lab.pki.intermediate.certificate.spkiPin.description
            #expect(try await get(servers["good"]!, "/", ["--pin", pin]).0 == 0)
            let (pinned, _, pinnedErr) = try await get(servers["mitm"]!, "/", ["--pin", pin])
            #expect(pinned == 60)
            #expect(pinnedErr.contains("pins expected: \(pin)"))
            #expect(try await get(servers["good"]!, "/status/404", ["--fail"]).0 == 22)
            #expect(try await get(servers["good"]!, "/status/404").0 == 0)
            #expect(try await get(servers["good"]!, "/redirect?to=/", ["--max-redirs", "0"]).0 == 47)
            #expect(try await get(servers["good"]!, "/redirect?to=/").0 == 0)
            #expect(try await get(servers["good"]!, "/slow?ms=3000", ["-m", "0.5"]).0 == 28)
            let out = try temporaryDirectory() + "/body"
            #expect(try await get(servers["good"]!, "/bytes/100000", ["-o", out]).0 == 0)
            #expect((try? Data(contentsOf: URL(fileURLWithPath: out)))?.count == 100_000)
            let (posted, echoed, _) = try await get(servers["good"]!, "/echo", ["-d", "a=1"])
            #expect(posted == 0)
            #expect(echoed == "POST\na=1")
            #expect(try await get(servers["good"]!, "/", ["--mode", "certificate", "--pinned-cert", CLI.lab + "/intermediate.pem"]).0 == 0)
            #expect(try await get(servers["mitm"]!, "/", ["--mode", "certificate", "--pinned-cert", CLI.lab + "/intermediate.pem"]).0 == 60)
            let (verbose, _, log) = try await get(servers["good"]!, "/", ["-v"])
            #expect(verbose == 0)
            #expect(log.contains("challenge: serverTrust"))
            #expect(log.contains("disposition: performDefaultHandling"))
            #expect(log.contains(Lab.chain("good")[0].spkiPin.description))
            #expect(log.contains("HTTP/2 over TLSv1.3"))
        }
    }

    @Test func connectionAndUsageErrors() async throws {
        #expect(try await run(CLI.binary, ["get", "https://127.0.0.1:1/"]).0 == 7)
        #expect(try await run(CLI.binary, ["get", "ftp://example.test/"]).0 == 1)
        #expect(try await run(CLI.binary, ["get", "https://127.0.0.1/", "--max-redirs", "-1"]).0 == 2)
        #expect(try await run(CLI.binary, ["get", "https://127.0.0.1/", "--pin", "nope"]).0 == 2)
        #expect(try await run(CLI.binary, ["get", "https://127.0.0.1/", "--allow-invalid"]).0 == 2)
    }

    @Test func handshakeFailureOtherThanTrustIs35() async throws {
        let identity = Lab.pki.servers["good"]!
        let server = try await LabServer.start(
            name: "old", host: "good.lab.test", chain: identity.chain, privateKey: identity.privateKey, maximumTLSVersion: .tlsv11,
            minimumTLSVersionOverride: .tlsv1)
        try await withTeardown({ try? await server.shutdown() }) { () async throws in
            #expect(try await get(server).0 == 35)
        }
    }

    /// Interoperability with a TLS server we did not write.
    @Test(.requires(.openssl)) func againstOpenSSLServer() async throws {
        let lab = CLI.lab
        let (process, port) = try await startOpenSSLServer([
            "-cert", lab + "/good/cert.pem", "-cert_chain", lab + "/intermediate.pem",
            "-key", lab + "/good/key.pem", "-www",
        ])
        defer { stop(process) }
        let resolve = ["--resolve", "good.lab.test:\(port):127.0.0.1"]
        let status = try await run(CLI.binary, ["get", "https://good.lab.test:\(port)/", "--cacert", lab + "/roots.pem", "-o", "/dev/null"] + resolve).0
        #expect(status == 0)
        #expect(try await run(CLI.binary, ["get", "https://good.lab.test:\(port)/", "-o", "/dev/null"] + resolve).0 == 60)
        #expect(try await run(CLI.binary, ["get", "https://127.0.0.1:\(port)/", "--cacert", lab + "/roots.pem", "-o", "/dev/null"]).0 == 0)
        #expect(
            try await run(
                CLI.binary, ["get", "https://elsewhere.lab.test:\(port)/", "--cacert", lab + "/roots.pem", "--resolve", "elsewhere.lab.test:\(port):127.0.0.1"]
            ).0 == 60)
    }
}

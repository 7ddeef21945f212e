import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport
import X509

/// CRLs with tools we did not write: `openssl ca -gencrl` makes them for `trust` (engine, `evaluate`, `get`, beside
/// curl's `--crlfile`), and `openssl verify -crl_check` judges the lab's own.
@Suite("Revocation interoperability with openssl and curl", .serialized, .timeLimit(.minutes(5)), .paced)
struct RevocationInteropTests {
    static let openssl = "/usr/bin/openssl"
    static let curl = "/usr/bin/curl"

    /// A CRL of the lab intermediate made by `openssl ca -gencrl`, revoking `revoked` (keyCompromise).
    static func opensslCRL(revoking revoked: [Certificate], in dir: String) async throws -> String {
        let ca = dir + "/openssl-ca"
        try FileManager.default.createDirectory(atPath: ca, withIntermediateDirectories: true)
        let intermediate = Lab.pki.intermediate.identity
        try intermediate.certificatePEM.write(toFile: ca + "/ca.pem", atomically: true, encoding: .utf8)
        try intermediate.privateKeyPEM.write(toFile: ca + "/ca.key", atomically: true, encoding: .utf8)
        // index.txt (openssl ca's database): status, expiry, revocation date and reason, serial, file, subject.
        let lines = revoked.map { certificate in
            "R\t301231235959Z\t240101000000Z,keyCompromise\t\(certificate.openSSLSerial)\tunknown\t/O=swift-trust lab/CN=revoked\n"
        }
        try lines.joined().write(toFile: ca + "/index.txt", atomically: true, encoding: .utf8)
        try "1000\n".write(toFile: ca + "/crlnumber", atomically: true, encoding: .utf8)
        let config = """
            [ ca ]
            default_ca = lab
            [ lab ]
            database = \(ca)/index.txt
            crlnumber = \(ca)/crlnumber
            default_md = sha256
            default_crl_days = 7
            crl_extensions = crl_ext
            [ crl_ext ]
            authorityKeyIdentifier = keyid:always
            """
        try config.write(toFile: ca + "/ca.cnf", atomically: true, encoding: .utf8)
        let out = ca + "/crl-\(revoked.count).pem"
        let (status, _, err) = try await run(
            Self.openssl, ["ca", "-gencrl", "-config", ca + "/ca.cnf", "-cert", ca + "/ca.pem", "-keyfile", ca + "/ca.key", "-out", out])
        #expect(status == 0, "openssl ca -gencrl: \(err)")
        return out
    }

    @Test(.requires(.openssl)) func opensslCRLsAreHonoured() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let good = try #require(Lab.pki.servers["good"])
        let revokedCRL = try await Self.opensslCRL(revoking: [good.certificate], in: dir)
        let intermediateOnly = try await Self.opensslCRL(revoking: [], in: dir)
        // curl's --crlfile checks the whole chain (OpenSSL's CRL_CHECK_ALL), so the intermediate needs the root's
        // CRL too: openssl's CRL of the intermediate and the lab's of the root, in one PEM file as curl reads it.
        let emptyCRL = dir + "/empty-chain.pem"
        let rootCRL = try LabCRL(issuer: Lab.pki.root).pem
        try (String(contentsOfFile: intermediateOnly, encoding: .utf8) + rootCRL).write(toFile: emptyCRL, atomically: true, encoding: .utf8)
        let revokedChainCRL = dir + "/revoked-chain.pem"
        try (String(contentsOfFile: revokedCRL, encoding: .utf8) + rootCRL).write(toFile: revokedChainCRL, atomically: true, encoding: .utf8)
        // The engine: revoked with openssl's reason; the empty CRL says good.
        let parsed = try CertificateRevocationList.load(path: revokedCRL)
        #expect(parsed.count == 1 && parsed.first?.entry(for: good.certificate)?.reason == .keyCompromise && parsed.first?.crlNumber == [0x10, 0x00])
        // trust evaluate, and trust get beside curl, against the lab's `good` server.
        let base = ["evaluate", "--anchors", CLI.lab + "/roots.pem", "--anchors-only", "--chain", CLI.lab + "/good/chain.pem", "--host", "good.lab.test"]
        let (revokedStatus, revokedOut, _) = try await run(CLI.binary, base + ["--crlfile", revokedChainCRL])
        #expect(revokedStatus == 1 && revokedOut.contains("revoked") && revokedOut.contains("keyCompromise"), "\(revokedOut)")
        #expect(try await run(CLI.binary, base + ["--crlfile", emptyCRL]).0 == 0)
        // The intermediate's CRL alone: the chain is not fully covered (as curl); the leaf alone is good.
        #expect(try await run(CLI.binary, base + ["--crlfile", intermediateOnly]).0 == 1)
        #expect(try await run(CLI.binary, base + ["--crlfile", intermediateOnly, "--revocation-depth", "leaf"]).0 == 0)
        try await withLabServers(["good"]) { servers in
            let server = try #require(servers["good"])
            let lab = ["--resolve", "\(server.host):\(server.port):127.0.0.1", "--cacert", CLI.lab + "/roots.pem", "-o", "/dev/null"]
            let (status, _, err) = try await run(CLI.binary, ["get", server.baseURL + "/"] + lab + ["--crlfile", revokedChainCRL])
            #expect(status == 60 && err.contains("revoked"), "\(status) \(err)")
            #expect(try await run(CLI.binary, ["get", server.baseURL + "/"] + lab + ["--crlfile", emptyCRL]).0 == 0)
            #expect(try await run(CLI.binary, ["get", server.baseURL + "/"] + lab + ["--crlfile", intermediateOnly]).0 == 60)
            if FileManager.default.isExecutableFile(atPath: Self.curl) {
                // The same three files, the same exit codes from curl.
                #expect(try await run(Self.curl, ["-sS", server.baseURL + "/"] + lab + ["--crlfile", revokedChainCRL]).0 == 60)
                #expect(try await run(Self.curl, ["-sS", server.baseURL + "/"] + lab + ["--crlfile", emptyCRL]).0 == 0)
                #expect(try await run(Self.curl, ["-sS", server.baseURL + "/"] + lab + ["--crlfile", intermediateOnly]).0 == 60)
            } else {
                print("RevocationInteropTests: curl is missing, so trust get is not compared with curl --crlfile")
            }
        }
    }

    @Test(.requires(.openssl)) func opensslVerifiesTheLabCRLs() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let good = try #require(Lab.pki.servers["good"])
        for (name, revoked) in [("revoked", [LabCRL.Revoked(good.certificate, reason: .keyCompromise)]), ("empty", [])] {
            let crl = try LabCRL(issuer: Lab.pki.intermediate, revoked: revoked)
            try crl.pem.write(toFile: dir + "/\(name).pem", atomically: true, encoding: .utf8)
            let (status, out, err) = try await run(
                Self.openssl,
                [
                    "verify", "-crl_check", "-CAfile", CLI.lab + "/root.pem", "-untrusted", CLI.lab + "/intermediate.pem",
                    "-CRLfile", dir + "/\(name).pem", CLI.lab + "/good/cert.pem",
                ])
            if name == "revoked" {
                #expect(status != 0 && (out + err).contains("certificate revoked"), "\(out) \(err)")
            } else {
                #expect(status == 0, "\(out) \(err)")
            }
            let (textStatus, text, _) = try await run(Self.openssl, ["crl", "-in", dir + "/\(name).pem", "-noout", "-text"])
            #expect(textStatus == 0 && text.contains("X509v3 CRL Number"), "\(text)")
        }
    }

    @Test func cliRevocationOptions() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let base = ["evaluate", "--anchors", CLI.lab + "/roots.pem", "--anchors-only", "--chain", CLI.lab + "/good/chain.pem", "--host", "good.lab.test"]
        // --revocation hard without a CRL: unknown → refused; soft: allowed with a note; off: nothing said.
        let (hard, hardOut, _) = try await run(CLI.binary, base + ["--revocation", "hard"])
        #expect(hard == 1 && hardOut.contains("revocation-status-unknown"), "\(hardOut)")
        let (soft, softOut, _) = try await run(CLI.binary, base + ["--revocation", "soft"])
        #expect(soft == 0 && softOut.contains("revocation checking is soft"), "\(softOut)")
        // Only the intermediate's CRL: the leaf is good, the intermediate's status unknown (refused by --crlfile's chain default).
        let empty = try LabCRL(issuer: Lab.pki.intermediate)
        try empty.pem.write(toFile: dir + "/empty.pem", atomically: true, encoding: .utf8)
        #expect(try await run(CLI.binary, base + ["--crlfile", dir + "/empty.pem", "--revocation-depth", "leaf"]).0 == 0)
        #expect(try await run(CLI.binary, base + ["--crlfile", dir + "/empty.pem"]).0 == 1)
        let (softChain, softChainOut, _) = try await run(CLI.binary, base + ["--crlfile", dir + "/empty.pem", "--revocation", "soft"])
        #expect(softChain == 0 && softChainOut.contains("Issuing CA"), "\(softChainOut)")
        // Unreadable or malformed CRLs, bad values: usage errors (2) in evaluate, curl's 82 in get.
        try "-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n".write(toFile: dir + "/bad.pem", atomically: true, encoding: .utf8)
        for extra in [
            ["--crlfile", dir + "/bad.pem"], ["--crlfile", dir + "/missing.pem"], ["--revocation", "sometimes"], ["--revocation-depth", "root"],
            ["--crlfile", dir + "/empty.pem", "--config", dir + "/missing.json"],
        ] {
            let (status, _, err) = try await run(CLI.binary, base + extra)
            #expect(status == 2, "\(extra): \(status) \(err)")
        }
        let (getStatus, _, getErr) = try await run(CLI.binary, ["get", "https://127.0.0.1:9/", "--crlfile", dir + "/bad.pem"])
        #expect(getStatus == 82 && getErr.contains("CRL"), "\(getStatus) \(getErr)")
    }

    /// `openssl ocsp` as a real responder on a port (not ours): a leaf it says is good is accepted, one it says is
    /// revoked is refused, through the engine's fetcher and through `trust get`.
    @Test(.requires(.openssl)) func opensslResponderIsHonoured() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let issuer = Lab.pki.intermediate
        try issuer.identity.certificatePEM.write(toFile: dir + "/ca.pem", atomically: true, encoding: .utf8)
        try issuer.identity.privateKeyPEM.write(toFile: dir + "/ca.key", atomically: true, encoding: .utf8)
        // The responder's port must be in the leaves' AIA before openssl reads its index of their serials: a free port
        // is chosen, then openssl binds it; another process taking it first makes openssl fail, and a new one is tried.
        for attempt in 1...5 {
            let probe = try RefusingPort()
            let port = probe.port
            probe.close()
            let responder = "http://127.0.0.1:\(port)/"
            let good = try issuer.leaf(dnsNames: ["good.lab.test"], ocspResponders: [responder])
            let revoked = try issuer.leaf(dnsNames: ["good.lab.test"], ocspResponders: [responder])
            func serial(_ identity: LabIdentity) -> String { identity.certificate.openSSLSerial.replacingOccurrences(of: ":", with: "").uppercased() }
            let index =
                "V\t301231235959Z\t\t\(serial(good))\tunknown\t/CN=good\n"
                + "R\t301231235959Z\t240101000000Z,keyCompromise\t\(serial(revoked))\tunknown\t/CN=revoked\n"
            try index.write(toFile: dir + "/index.txt", atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.openssl)
            process.arguments = [
                "ocsp", "-index", dir + "/index.txt", "-CA", dir + "/ca.pem", "-rsigner", dir + "/ca.pem", "-rkey", dir + "/ca.key",
                "-port", String(port), "-ndays", "1",
            ]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            defer { stop(process) }
            // Ready when it prints "ACCEPT …" (a connection that sends nothing would stall it: it serves one at a
            // time); its output ends at once when the port was taken.
            let handle = output.fileHandleForReading
            let ready = await Task.detached {
                var seen = Data()
                while !String(decoding: seen, as: UTF8.self).contains("ACCEPT") {
                    let chunk = handle.availableData
                    if chunk.isEmpty { return false }
                    seen += chunk
                }
                return true
            }.value
            guard ready else {
                if attempt == 5 { Issue.record("openssl ocsp never listened on a free port") }
                continue
            }
            // The engine, through OCSPFetcher.
            var policy = ValidationPolicy.webPKI
            policy.revocation = RevocationPolicy(mode: .hard)
            // Patient fetchers: `openssl ocsp` answers one connection at a time, and what is checked is its answer.
            let evaluator = try RevocationCheckingEvaluator(
                anchors: Lab.anchors, policy: policy, ocspFetcher: try PatientFetchers.ocsp(), fetchBudget: PatientFetchers.fetchBudget)
            let accepted = await evaluator.evaluate(try ServerTrust(presentedChain: good.chain, host: "good.lab.test"))
            #expect(accepted.isTrusted, "\(accepted.reasons)")
            let refused = await evaluator.evaluate(try ServerTrust(presentedChain: revoked.chain, host: "good.lab.test"))
            #expect(refused.codes == ["revoked"] && refused.reasons.first?.description.contains("keyCompromise") == true, "\(refused.reasons)")
            await evaluator.shutdown()
            // trust get, each leaf served by a lab server.
            for (identity, expected) in [(good, Int32(0)), (revoked, Int32(60))] {
                let server = try await LabServer.start(name: "openssl-ocsp", host: "good.lab.test", chain: identity.chain, privateKey: identity.privateKey)
                // A run the fetch budget cut short on a loaded machine is run again (runOnTime).
                var attempts = 0
                let (status, _, err) = try await runOnTime(
                    [
                        "get", "https://good.lab.test:\(server.port)/", "--resolve", "good.lab.test:\(server.port):127.0.0.1",
                        "--cacert", CLI.lab + "/roots.pem", "--anchors-only", "--revocation", "hard", "-o", "/dev/null",
                    ], attempts: &attempts)
                #expect(status == expected, "\(err)")
                if expected == 60 { #expect(err.contains("keyCompromise") && err.contains("OCSP responder"), "\(err)") }
                try await server.shutdown()
            }
            return
        }
    }
}

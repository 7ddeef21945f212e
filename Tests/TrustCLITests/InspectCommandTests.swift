import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

@Suite("trust inspect explains each lab failure", .serialized, .timeLimit(.minutes(5)), .paced)
struct InspectCommandTests {
    func inspect(_ server: LabServer, _ extra: [String] = []) async throws -> (Int32, String, String) {
        try await run(
            CLI.binary, ["inspect", server.baseURL, "--resolve", "\(server.host):\(server.port):127.0.0.1", "--cacert", CLI.lab + "/roots.pem"] + extra)
    }

    @Test func everyFailureConfigurationIsExplainedWithAFix() async throws {
        let expectations: [(String, Int32, [String])] = [
            ("good", 0, ["TRUSTED", "validated path: CN=good.lab.test", "TLSv1.3", "ALPN h2"]),
            ("expired", 1, ["expired: CN=expired.lab.test", "Fix: renew"]),
            ("not-yet-valid", 1, ["not yet valid", "Fix: check this machine's clock"]),
            ("wrong-host", 1, ["name mismatch", "it holds other.lab.test"]),
            ("self-signed", 1, ["self-signed:", "Fix:"]),
            ("untrusted-root", 1, ["unknown", "CN=swift-trust Lab Untrusted Root", "--cacert"]),
            ("incomplete-chain", 1, ["incomplete chain", "send it after its certificate"]),
            ("no-san", 1, ["no subjectAltName extension"]),
        ]
        for (name, status, needles) in expectations {
            let server = try await LabServer.start(name, pki: Lab.pki)
            let (code, out, err) = try await inspect(server)
            #expect(code == status, "\(name): \(out) \(err)")
            for needle in needles { #expect(out.contains(needle), "\(name) lacks \"\(needle)\":\n\(out)") }
            #expect(!out.contains("\u{1B}["), "no colour when not on a terminal")
            try await server.shutdown()
        }
    }

    /// --showcerts prints the presented chain as PEM; a server that asks for a client certificate is
    /// named as such; a plain-HTTP port gets one sentence, no BoringSSL text or source path.
    @Test func showcertsClientCertificateRequestsAndPlainPorts() async throws {
        let good = try await LabServer.start("good", pki: Lab.pki)
        let (code, out, err) = try await inspect(good, ["--showcerts"])
        #expect(code == 0, "\(err)")
        let pem = out.components(separatedBy: "\n").filter { !$0.hasPrefix(" ") }.joined(separator: "\n")
        #expect(try CertificateSource.certificates(pem: pem) == Lab.chain("good"))
        #expect(!out.contains("client certificate:"))
        try await good.shutdown()

        for mode in [LabServer.MutualTLSMode.required, .optional] {
            let server = try await LabServer.start(mutualTLS: mode, pki: Lab.pki)
            let (mtlsCode, mtlsOut, mtlsErr) = try await inspect(server)
            #expect(mtlsCode == 0 || mtlsCode == 35, "\(mtlsErr)")
            #expect(
                (mtlsOut + mtlsErr).contains("asked for a client certificate") || mtlsOut.contains("client certificate: the server asked for one"),
                "\(mode): \(mtlsOut) \(mtlsErr)")
            let (_, json, _) = try await inspect(server, ["--json"])
            if mtlsCode == 0 { #expect(json.contains("\"clientCertificateRequested\" : true"), "\(json)") }
            try await server.shutdown()
        }

        let plain = try await LabServer.startPlain(name: "plain")
        let (plainCode, plainOut, plainErr) = try await run(
            CLI.binary, ["inspect", "https://\(plain.host):\(plain.port)/", "--resolve", "\(plain.host):\(plain.port):127.0.0.1"])
        #expect(plainCode == 35)
        #expect(plainErr.contains("does not speak TLS") && plainErr.contains("http://\(plain.host):\(plain.port)/"), "\(plainErr)")
        #expect(!plainErr.contains(".cc") && !plainErr.contains("OPENSSL_internal") && !plainErr.contains("error:"), "\(plainErr)")
        #expect(plainOut.isEmpty)
        try await plain.shutdown()
    }

    @Test func pinsConfigJSONAndConnectionFailures() async throws {
        let mitm = try await LabServer.start("mitm", pki: Lab.pki)
        let pin = Lab.pki.intermediate.certificate.spkiPin.description
        let (code, out, _) = try await inspect(mitm, ["--pin", pin])
        #expect(code == 1)
        #expect(out.contains("pin mismatch") && out.contains("appended") && out.contains(Lab.pki.otherRoot.certificate.spkiPin.description), "\(out)")
        let (jsonCode, json, _) = try await inspect(mitm, ["--json"])
        #expect(jsonCode == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["trusted"] as? Bool == true && (object["presentedChain"] as? [Any])?.count == 2)
        // --host checks another name than the one connected to.
        #expect(try await inspect(mitm, ["--host", "elsewhere.lab.test"]).0 == 1)
        try await mitm.shutdown()
        // A server that only speaks TLS 1.1.
        let identity = Lab.pki.servers["good"]!
        let old = try await LabServer.start(
            name: "old", host: "good.lab.test", chain: identity.chain, privateKey: identity.privateKey,
            maximumTLSVersion: .tlsv11, minimumTLSVersionOverride: .tlsv1)
        let (tlsCode, _, tlsWhy) = try await inspect(old)
        #expect(tlsCode == 35)
        #expect(tlsWhy.contains("does not offer TLS 1.2 or 1.3"), "\(tlsWhy)")
        try await old.shutdown()
        #expect(try await run(CLI.binary, ["inspect", "https://127.0.0.1:1"]).0 == 7)
        #expect(try await run(CLI.binary, ["inspect", "ftp://x"]).0 == 2)
    }
}

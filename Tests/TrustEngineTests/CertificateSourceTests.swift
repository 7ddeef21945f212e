import Foundation
import Testing
import Trust
import TrustLabPKI
import TrustTestSupport
import X509

@Suite("CertificateSource: PEM, DER, files and folders; typed errors, no crashes", .paced)
struct CertificateSourceTests {
    @Test func readsPEMBundlesDERFilesAndFolders() throws {
        let dir = try temporaryDirectory()
        try Lab.pki.write(to: dir)
        #expect(try CertificateSource.certificates(atPath: dir + "/good/chain.pem").count == 2)
        #expect(try CertificateSource.certificates(atPath: dir + "/roots.pem") == Lab.pki.trustedRoots)
        let der = Lab.pki.root.certificate.derBytes
        try Data(der).write(to: URL(fileURLWithPath: dir + "/root.der"))
        #expect(try CertificateSource.certificates(atPath: dir + "/root.der") == [Lab.pki.root.certificate])
        // A folder: .pem/.der/.cer/.crt files only, in name order (pins.txt is ignored).
        let folder = try CertificateSource.certificates(inDirectory: dir)
        #expect(folder.count == 8)  // roots.pem (2) + client-ca, root, intermediate, other-root, untrusted-root + root.der
    }

    @Test func malformedInputGivesTypedErrorsNamingTheSource() throws {
        let pem = Lab.pki.root.certificate.pemString
        func kind(_ text: String) -> CertificateLoadingError.Kind? {
            do {
                _ = try CertificateSource.certificates(bytes: Array(text.utf8), source: "test.pem")
                return nil
            } catch {
                #expect(error.source == "test.pem")
                return error.kind
            }
        }
        #expect(kind("") == .noCertificates)
        #expect(kind("hello") == .noCertificates)
        #expect(kind(String(pem.dropLast(30))) == .unterminatedPEMBlock(block: 1))
        #expect(kind("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n") == .invalidBase64(block: 1))
        if case .malformedCertificate(let block, _)? = kind("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")?.detail {
            #expect(block == 1)
        } else {
            Issue.record("expected malformedCertificate")
        }
        #expect(throws: CertificateLoadingError.self) { try CertificateSource.certificates(atPath: "/nonexistent/file.pem") }
        // Truncated and bit-flipped DER never crash.
        let der = Lab.pki.root.certificate.derBytes
        for length in stride(from: 0, to: der.count, by: 7) {
            _ = try? CertificateSource.certificate(der: der.prefix(length))
        }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            var mutated = der
            mutated[Int.random(in: 0..<mutated.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            _ = try? CertificateSource.certificate(der: mutated)
        }
    }

    /// `trust evaluate --chain` (and the FuzzEvaluateChainInput target) read chains this way.
    @Test(.requires(.openssl)) func presentedChainInputLeavesOutUnprocessableCertificatesAndRefusesAnUnprocessableLeaf() async throws {
        let openssl = "/usr/bin/openssl"
        let dir = try temporaryDirectory()
        let (status, _, err) = try await run(
            openssl,
            [
                "req", "-x509", "-nodes", "-newkey", "rsa:1024", "-keyout", dir + "/key.pem", "-out", dir + "/weak.pem",
                "-days", "30", "-subj", "/CN=weak.test",
            ])
        #expect(status == 0, "\(err)")
        let weak = try String(contentsOfFile: dir + "/weak.pem", encoding: .utf8)
        let good = Lab.chain("good")
        let goodPEM = good.map(\.pemString).joined(separator: "\n")

        // After the leaf: left out, with a note; the chain is evaluated without it.
        let lenient = try PresentedChainInput(bytes: Array((goodPEM + "\n" + weak).utf8), source: "chain.pem")
        #expect(lenient.certificates == good)
        #expect(lenient.notes.count == 1)
        #expect(lenient.notes.first?.hasPrefix("presented certificate 2 (CN=weak.test) was ignored") == true, "\(lenient.notes)")
        #expect(lenient.refusal(peerName: nil) == nil)

        // As the leaf: refused with why, nothing presented, and what follows is not looked at.
        let refused = try PresentedChainInput(bytes: Array((weak + goodPEM).utf8))
        #expect(refused.certificates.isEmpty && refused.notes.isEmpty)
        let peer = try PeerName(host: "weak.test")
        let decision = try #require(refused.refusal(peerName: peer))
        #expect(!decision.isTrusted)
        #expect(decision.reasons.contains { if case .weakKey = $0.detail { true } else { false } }, "\(decision.reasons)")
        #expect(
            decision.presentedChain.isEmpty && decision.peerName == peer && decision.policy == .certificateParsing
                && decision.policy.description == "certificate parsing")
        #expect(decision.notes.count == 1 && decision.notes[0].contains("could not be processed"), "\(decision.notes)")

        // Not certificates at all: the loading error, naming the source.
        #expect(throws: CertificateLoadingError(source: "x", kind: .noCertificates)) { try PresentedChainInput(bytes: Array("hello".utf8), source: "x") }
    }

    @Test func rfc3339TimesKeepFractionalSecondsAndOffsets() {
        #expect(RFC3339.parse("2024-03-01T00:00:00.999+00:00")?.timeIntervalSince1970 == 1_709_251_200.999)
        #expect(RFC3339.parse("2024-03-01T02:00:00+02:00")?.timeIntervalSince1970 == 1_709_251_200)
        #expect(RFC3339.parse("2024-03-01T00:00:00Z")?.timeIntervalSince1970 == 1_709_251_200)
        #expect(RFC3339.parse("2024-03-01T00:00:00") == nil)
        #expect(RFC3339.parse("2024-02-30T00:00:00Z") == nil)
    }
}

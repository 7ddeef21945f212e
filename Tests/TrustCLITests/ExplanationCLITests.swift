import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// `trust inspect`, `get` and `demo` print the library's words for a failure (``TrustFailureReason/explanation``,
/// ``TrustHTTPClientError/explanation``), not words of their own.
@Suite("trust: explanations are the library's", .serialized, .timeLimit(.minutes(5)), .paced)
struct ExplanationCLITests {
    /// The library's explanation of an expired certificate (its summary and fix do not depend on the dates).
    static let expired = TrustFailureReason.expired(subject: "CN=x", notAfter: Date(), at: Date()).explanation

    @Test func inspectAndGetPrintTheLibrarysFix() async throws {
        let server = try await LabServer.start("expired", pki: Lab.pki)
        try await withTeardown({ try? await server.shutdown() }) {
            let resolve = ["--resolve", "\(server.host):\(server.port):127.0.0.1", "--cacert", CLI.lab + "/roots.pem"]
            let (code, out, err) = try await run(CLI.binary, ["inspect", server.baseURL] + resolve)
            #expect(code == 1, "\(err)")
            #expect(out.contains("  • \(Self.expired.summary): CN=expired.lab.test"), "\(out)")
            #expect(out.contains("Fix: \(Self.expired.fix)."), "\(out)")
            let (getCode, _, getErr) = try await run(CLI.binary, ["get", "-sS", server.baseURL] + resolve)
            #expect(getCode == 60)
            #expect(getErr.contains("fix: \(Self.expired.fix)"), "\(getErr)")
        }
    }

    /// A connection that fails before any certificate: the library's classification and words, curl's exit code.
    @Test func inspectConnectionFailuresUseTheLibrarysWords() async throws {
        let plain = try await LabServer.startPlain(name: "plain")
        let url = try #require(URL(string: "https://\(plain.host):\(plain.port)/"))
        let (code, _, err) = try await run(CLI.binary, ["inspect", url.absoluteString, "--resolve", "\(plain.host):\(plain.port):127.0.0.1"])
        try await plain.shutdown()
        let notTLS = TrustHTTPClientError.HandshakeFailure.notTLS.explanation(url: url)
        #expect(code == 35)
        #expect(err.contains(notTLS.summary) && err.contains("Fix: \(notTLS.fix)."), "\(err)")
        let refused = TrustHTTPClientError.Code.cannotConnectToHost.explanation
        let (refusedCode, _, refusedErr) = try await run(CLI.binary, ["inspect", "https://127.0.0.1:1"])
        #expect(refusedCode == 7 && refusedErr.contains("Fix: \(refused.fix)."), "\(refusedErr)")
    }

    @Test func demoPrintsTheLibrarysSummaries() async throws {
        let (status, out, err) = try await run(CLI.binary, ["demo"])
        #expect(status == 0, "\(out)\n\(err)")
        let pin = try SPKIPin(digest: [UInt8](repeating: 1, count: 32))
        for summary in [
            Self.expired.summary, TrustFailureReason.pinMismatch(seen: [], expected: [pin]).explanation.summary,
            TrustHTTPClientError.Code.clientCertificateRequired.explanation.summary,
        ] {
            #expect(out.contains("  \(summary)\n"), "\(summary): \(out)")
        }
    }

    /// No CLI source decides anything by matching an error's or a reason's text: they classify on types and codes.
    @Test func noCLISourceMatchesDescriptionText() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources/trust").standardized
        let files = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { $0.hasSuffix(".swift") }
        #expect(files.contains("InspectCommand.swift") && files.contains("DemoCommand.swift"))
        // An error's text matched, kept for matching, or read as BoringSSL's (TrustHTTP's classification does that).
        let patterns = [
            "description.contains(", "message.contains(", "underlying?.contains(", ")\".contains(", "notes.contains(", "= \"\\(error)\"", "BoringSSLErrorText(",
        ]
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for pattern in patterns { #expect(!text.contains(pattern), "\(file) matches text with \(pattern)") }
        }
    }
}

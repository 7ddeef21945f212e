import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// Every lab configuration × HTTP/1.1 and HTTP/2 × every trust configuration × first and later
/// connections: the TrustHTTPClient's outcome must equal the offline evaluation of the same presented chain
/// by the same evaluator, and a refusal must carry that evaluation.
@Suite("Session matrix: the handshake decides exactly as the engine", .serialized, .timeLimit(.minutes(5)), .paced)
struct SessionMatrixTests {
    static func evaluators() throws -> [(String, any TrustEvaluator)] {
        let intermediate = Lab.pki.intermediate.certificate
        return [
            ("lab anchors only", DefaultTrustEvaluator(anchors: Lab.anchors)),
            ("lab anchors added to system", DefaultTrustEvaluator(anchors: .system(adding: Lab.pki.trustedRoots))),
            ("public-key pin", try PublicKeysTrustEvaluator(pins: [intermediate.spkiPin], anchors: Lab.anchors)),
            ("certificate pin", try PinnedCertificatesTrustEvaluator(certificates: [intermediate])),
            ("AF none", SecurityPolicy(pinningMode: .none, systemAnchors: Lab.anchors)),
            ("AF public key", SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [intermediate], systemAnchors: Lab.anchors)),
            ("AF certificate", SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [intermediate], systemAnchors: Lab.anchors)),
        ]
    }

    @Test(arguments: [LabServer.Protocols.http1Only, .http2AndHTTP1])
    func sessionAgreesWithTheEngineEverywhere(_ protocols: LabServer.Protocols) async throws {
        let names = LabPKI.serverNames.filter { $0 != "ip-only" }
        try await withLabServers(names, protocols: protocols) { servers in
            var trustedCount = 0
            var refusedCount = 0
            for (label, evaluator) in try Self.evaluators() {
                let session = try labSession(evaluator)
                for name in names {
                    let server = servers[name]!
                    let expected = await evaluator.evaluate(Lab.trust(name))
                    for attempt in 0..<2 {
                        do {
                            let response = try await session.data(for: TrustHTTPClientRequest(url: url(server)))
                            #expect(expected.isTrusted, "\(label) / \(name) / attempt \(attempt): trusted by the session, refused offline: \(expected.reasons)")
                            #expect(response.httpVersion == (protocols == .http1Only ? .http1_1 : .http2))
                            #expect(response.serverTrust?.isTrusted == true)
                            trustedCount += 1
                        } catch let error as TrustHTTPClientError {
                            #expect(!expected.isTrusted, "\(label) / \(name) / attempt \(attempt): refused by the session: \(error)")
                            #expect(error.trustDecision?.reasons.map(\.code) == expected.reasons.map(\.code), "\(label) / \(name)")
                            refusedCount += 1
                        }
                    }
                }
                await session.shutdown()
            }
            // The matrix exercises both outcomes broadly.
            #expect(trustedCount >= 14)
            #expect(refusedCount >= 100)
        }
    }

    /// Nothing in the environment turns verification off.
    @Test func environmentCannotDisableVerification() async throws {
        for (name, value) in [
            ("SWIFT_TRUST_INSECURE", "1"), ("SSL_CERT_FILE", "/dev/null"), ("NODE_TLS_REJECT_UNAUTHORIZED", "0"),
            ("PYTHONHTTPSVERIFY", "0"), ("CURL_CA_BUNDLE", ""), ("GIT_SSL_NO_VERIFY", "1"),
        ] {
            setenv(name, value, 1)
        }
        defer {
            for name in ["SWIFT_TRUST_INSECURE", "SSL_CERT_FILE", "NODE_TLS_REJECT_UNAUTHORIZED", "PYTHONHTTPSVERIFY", "CURL_CA_BUNDLE", "GIT_SSL_NO_VERIFY"] {
                unsetenv(name)
            }
        }
        try await withLabServers(["self-signed", "good"]) { servers in
            let session = try labSession()
            try await withTeardown({ await session.shutdown() }) { () async throws in
                let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(servers["self-signed"]!))) }
                #expect(error?.code == .serverCertificateHasUnknownRoot)
                #expect(try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!))).statusCode == 200)
            }
        }
    }
}

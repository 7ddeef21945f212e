import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustNIO
import TrustTestSupport

/// `TLSConfiguration.trustClient()` loads no roots into BoringSSL: the verifier's callback is what
/// trusts a server, and a context used without it fails closed.
@Suite("trustClient(): the verifier decides, and without it nothing is trusted", .paced)
struct TrustClientContextTests {
    /// Handshakes and returns how many certificates of the validated path NIOSSL kept for the connection (nil: none).
    @discardableResult
    private func handshake(_ handler: @escaping @Sendable () throws -> NIOSSLClientHandler, port: Int) async throws -> Int? {
        let channel = try await TLSHandshake.connect(port: port, handler)
        defer { channel.close(promise: nil) }
        return try await channel.nioSSL_peerValidatedCertificateChain().get().map { Array($0).count }
    }

    @Test func withoutTheCallbackEveryHandshakeFails() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        try await withTeardown({ try? await server.shutdown() }) {
            let context = try NIOSSLContext(configuration: .trustClient(applicationProtocols: ["http/1.1"]))
            await #expect(throws: NIOSSLError.self) {
                try await handshake({ try NIOSSLClientHandler(context: context, serverHostname: "good.lab.test") }, port: server.port)
            }
        }
    }

    @Test func withTheVerifierTheLabServerIsTrusted() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        try await withTeardown({ try? await server.shutdown() }) {
            let context = try NIOSSLContext(configuration: .trustClient(applicationProtocols: ["http/1.1"]))
            let verifier = ServerTrustVerifier(evaluator: DefaultTrustEvaluator(anchors: Lab.anchors))
            let record = TrustRecord()
            let kept = try await handshake({ try verifier.makeClientHandler(context: context, host: "good.lab.test", record: record) }, port: server.port)
            #expect(record.decision?.isTrusted == true)
            // The validated path (leaf, intermediate, root) is NIOSSL's to give back, by default.
            #expect(kept == record.decision?.validatedPath.count && kept == 3, "\(String(describing: kept))")
        }
    }

    /// With `keepsValidatedChain` off, as a `TrustHTTPClient` sets it, the decision alone holds the path:
    /// NIOSSL keeps no parsed copy of it for the connection's lifetime.
    @Test func theValidatedChainCanBeLeftOutOfNIOSSL() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        try await withTeardown({ try? await server.shutdown() }) {
            let context = try NIOSSLContext(configuration: .trustClient(applicationProtocols: ["http/1.1"]))
            var configured = ServerTrustVerifier(evaluator: DefaultTrustEvaluator(anchors: Lab.anchors))
            configured.keepsValidatedChain = false
            let verifier = configured
            let record = TrustRecord()
            let kept = try await handshake({ try verifier.makeClientHandler(context: context, host: "good.lab.test", record: record) }, port: server.port)
            #expect(record.decision?.isTrusted == true)
            #expect(record.decision?.validatedPath.count == 3)
            #expect(kept == nil)
        }
    }
}

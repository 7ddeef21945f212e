import GRPCCore
import GRPCNIOTransportHTTP2Posix
import PinnedGRPC
import Testing
import Trust
import TrustGRPC
import TrustNIO

/// A gRPC server that requires client certificates through TrustGRPC: handlers see the verified client, and a
/// refused client's reason is given to the server's `onDecision`.
@Suite struct MutualTLSGRPCTests {
    /// A server requiring clients under the lab root, its decisions streamed to the test (finished when it stops).
    struct Server {
        let echo: EchoServer
        let decisions: AsyncStream<TrustDecision>
        let finish: @Sendable () -> Void

        static func start() async throws -> Server {
            let (decisions, continuation) = AsyncStream.makeStream(of: TrustDecision.self)
            let trust = GRPCServerTrust(ClientAuthentication(anchors: [GRPCLab.pki.root.certificate])) { continuation.yield($0) }
            let echo = try await GRPCLab.startServer("good", clientTrust: trust)
            return Server(echo: echo, decisions: decisions, finish: { continuation.finish() })
        }

        /// Stops the server, then every decision it made.
        func stop() async -> [TrustDecision] {
            await echo.stop()
            finish()
            var all: [TrustDecision] = []
            for await decision in decisions { all.append(decision) }
            return all
        }
    }

    @Test func anAcceptedClientReachesTheHandlers() async throws {
        let server = try await Server.start()
        let trust = try GRPCLab.pinnedTrust(host: "good.lab.test", identity: "client")
        let (answer, words) = try await GRPCLab.withEcho(trust, port: server.echo.port) { echo in
            (try await echo.get("hi"), try await echo.expand("x y"))
        }
        let decisions = await server.stop()
        #expect(answer.hasPrefix("CN=lab client"))
        #expect(answer.hasSuffix(": hi"))
        #expect(words.count == 2 && words.allSatisfy { $0.hasPrefix("CN=lab client") })
        #expect(!decisions.isEmpty && decisions.allSatisfy(\.isTrusted))
    }

    @Test(arguments: ["client-expired", "client-foreign", "client-server-eku"])
    func aRefusedClientIsRefusedForItsReason(identity: String) async throws {
        let server = try await Server.start()
        let trust = try GRPCLab.pinnedTrust(host: "good.lab.test", identity: identity)
        let error = await GRPCLab.rpcError { _ = try await GRPCLab.withEcho(trust, port: server.echo.port) { try await $0.get("hi") } }
        let decisions = await server.stop()
        #expect(error?.code == .unavailable)
        // The client's own trust had nothing against the server: no trust decision in its error.
        #expect(error?.trustDecision == nil)
        let refused = try #require(decisions.first { !$0.isTrusted })
        let reasons = refused.reasons
        switch identity {
        case "client-expired": #expect(reasons.contains { $0.kind == .expired })
        case "client-foreign": #expect(reasons.contains { $0.kind == .noPathToTrustedAnchor })
        default: #expect(reasons.contains { $0.kind == .missingExtendedKeyUsage })
        }
        #expect(decisions.allSatisfy { !$0.isTrusted })
    }

    @Test func aClientWithoutACertificateIsRefused() async throws {
        let server = try await Server.start()
        let trust = try GRPCLab.pinnedTrust(host: "good.lab.test")
        let error = await GRPCLab.rpcError { _ = try await GRPCLab.withEcho(trust, port: server.echo.port) { try await $0.get("hi") } }
        let decisions = await server.stop()
        #expect(error?.code == .unavailable)
        // No certificate, nothing to evaluate: BoringSSL refuses before any callback.
        #expect(decisions.isEmpty)
    }

    @Test func anOptionalRequirementIsATypedError() {
        var trust = GRPCServerTrust(ClientAuthentication(requirement: .required, anchors: [GRPCLab.pki.root.certificate]))
        // The same server trust applied to a TLS security the transport's own way, then made optional: refused.
        var tls = HTTP2ServerTransport.Posix.TransportSecurity.TLS.defaults(certificateChain: [], privateKey: .bytes([], format: .pem))
        #expect(throws: Never.self) { try trust.apply(to: &tls) }
        trust.clientAuthentication.requirement = .optional
        #expect(throws: GRPCServerTrustError.optionalClientCertificatesUnsupported) { try trust.apply(to: &tls) }
        trust.onDecision = { _ in }
        #expect(trust.onDecision != nil)
        #expect(throws: GRPCServerTrustError.optionalClientCertificatesUnsupported) {
            _ = try trust.transportSecurity(certificateChain: [], privateKey: .bytes([], format: .pem))
        }
    }
}

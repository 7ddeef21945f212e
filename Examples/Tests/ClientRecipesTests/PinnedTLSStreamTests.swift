import Foundation
import NIOCore
import NIOSSL
import PinnedTLSStream
import Testing
import Trust
import TrustLab
import TrustLabPKI

@Suite struct PinnedTLSStreamTests {
    static func request(_ host: String) -> ByteBuffer {
        ByteBuffer(string: "GET / HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
    }

    @Test("a pinned exchange over plain NIO: answered when the pin holds, refused in the handshake when it does not")
    func exchange() async throws {
        let pki = RecipesLab.pki
        let server = try await LabServer.start("good", pki: pki, protocols: .http1Only)
        let host = server.host
        let pinned = PinnedTLSConnection(
            evaluator: try PublicKeysTrustEvaluator(
                pins: [pki.intermediate.certificate.spkiPin, pki.otherRoot.certificate.spkiPin], anchors: .only(pki.trustedRoots)))
        let good = try await pinned.exchange(host: host, address: "127.0.0.1", port: server.port, request: Self.request(host))
        let wrong = PinnedTLSConnection(
            evaluator: try PublicKeysTrustEvaluator(
                pins: [pki.otherRoot.certificate.spkiPin, pki.untrustedRoot.certificate.spkiPin], anchors: .only(pki.trustedRoots)))
        let refused = await Result { try await wrong.exchange(host: host, address: "127.0.0.1", port: server.port, request: Self.request(host)) }
        try await server.shutdown()

        #expect(String(buffer: good.answer).hasPrefix("HTTP/1.1 200"))
        #expect(String(buffer: good.answer).contains("hello from good"))
        #expect(good.decision?.isTrusted == true && good.evaluations == 1 && !pinned.logsDecisions)
        let decision = try #require(good.decision)
        let line = PinnedTLSConnection.logLine(for: decision, host: host, port: server.port)
        #expect(line.level == .debug && line.metadata["trust.decision"] == "trusted")

        guard case .failure(let failure as PinnedTLSConnection.ExchangeError) = refused else {
            Issue.record("the wrong pins were accepted: \(refused)")
            return
        }
        let refusal = try #require(failure.decision)
        #expect(refusal.reasons.map(\.code) == ["pin-mismatch"])
        #expect(PinnedTLSConnection.logLine(for: refusal, host: host, port: server.port).level == .warning)
        // A decision built by the test, as a custom evaluator builds one: refused for a reason of the application's.
        let maintenance = TrustDecision(
            isTrusted: false, reasons: [.refusedByApplication("upstream in maintenance")], presentedChain: [], validatedPath: [], peerName: nil,
            evaluationTime: Date(), policy: .systemDefault(systemRoots: false, customAnchors: 0))
        let maintenanceLine = PinnedTLSConnection.logLine(for: maintenance, host: host, port: server.port)
        #expect(maintenanceLine.level == .notice && maintenanceLine.metadata["trust.reasons"] == ["refused-by-application"])

        let chain = try pki.servers["good"].map { try $0.chain.map { try NIOSSLCertificate(bytes: Array($0.serializeAsPEM().derBytes), format: .der) } } ?? []
        let trust = try PinnedTLSConnection.serverTrust(of: chain, host: host)
        #expect(trust.presentedChain.count == 2 && trust.peerName?.description == host)
    }
}

import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustNIO
import TrustTestSupport
import X509

/// TrustNIO's callbacks as any NIO server or client uses them (Vapor, Hummingbird, plain NIO): `@Sendable`,
/// returning the validated path to NIOSSL, and the converter from NIOSSL's certificates to a `ServerTrust`.
@Suite("TrustNIO: sendable callbacks, validated chains in NIOSSL's metadata, the certificate converter", .paced)
struct NIOCallbackTests {
    static func nio(_ certificates: [Certificate]) throws -> [NIOSSLCertificate] {
        try certificates.map { try NIOSSLCertificate(bytes: $0.derBytes, format: .der) }
    }

    static func verify(_ callback: TrustVerificationCallback, _ presented: [NIOSSLCertificate]) async throws -> NIOSSLVerificationResultWithMetadata {
        let promise = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: NIOSSLVerificationResultWithMetadata.self)
        callback(presented, promise)
        return try await promise.futureResult.get()
    }

    static func chain(_ result: NIOSSLVerificationResultWithMetadata) throws -> [[UInt8]]? {
        guard case .certificateVerified(let metadata) = result else { return nil }
        return try metadata.validatedCertificateChain.map { try $0.map { try $0.toDERBytes() } }
    }

    @Test func serverTrustCallbackReturnsTheValidatedPath() async throws {
        let verifier = ServerTrustVerifier(evaluator: DefaultTrustEvaluator(anchors: Lab.anchors))
        let record = TrustRecord()
        let callback = verifier.callback(peerName: try PeerName(host: "good.lab.test"), record: record)
        let presented = try Self.nio(Lab.chain("good"))
        let path = try #require(try Self.chain(try await Self.verify(callback, presented)))
        // Leaf, intermediate (both presented) and the root anchor the server did not send.
        #expect(path == [Lab.chain("good")[0].derBytes, Lab.chain("good")[1].derBytes, Lab.pki.root.certificate.derBytes])
        #expect(record.decision?.isTrusted == true)
        // Another host's name: refused, no metadata.
        let wrong = verifier.callback(peerName: try PeerName(host: "elsewhere.lab.test"), record: TrustRecord())
        guard case .failed = try await Self.verify(wrong, presented) else {
            Issue.record("a wrong host was verified")
            return
        }
    }

    /// A plain NIO client's verifier logs each decision as a TrustHTTPClient does (`TrustDecisionLog`): levels,
    /// metadata keys, no port or cache flag it cannot know.
    @Test func serverTrustVerifierLogsDecisions() async throws {
        let log = LogCapture()
        let presented = try Self.nio(Lab.chain("good"))
        let good = try PeerName(host: "good.lab.test")
        let verifier = ServerTrustVerifier(evaluator: DefaultTrustEvaluator(anchors: Lab.anchors), logger: log.logger)
        _ = try await Self.verify(verifier.callback(peerName: good, record: TrustRecord()), presented)
        _ = try await Self.verify(verifier.callback(peerName: try PeerName(host: "elsewhere.lab.test"), record: TrustRecord()), presented)
        let wrongPin = try SPKIPin(digest: [UInt8](repeating: 7, count: 32))
        let pinned = ServerTrustVerifier(evaluator: try PublicKeysTrustEvaluator(pins: [wrongPin], anchors: Lab.anchors), logger: log.logger)
        _ = try await Self.verify(pinned.callback(peerName: good, record: TrustRecord()), presented)
        // Without a logger: nothing (the records above are the only ones).
        _ = try await Self.verify(
            ServerTrustVerifier(evaluator: DefaultTrustEvaluator(anchors: Lab.anchors)).callback(peerName: good, record: TrustRecord()), presented)

        let records = log.all
        #expect(records.map(\.level) == [.debug, .notice, .warning])
        #expect(records.map(\.message) == ["server trusted", "server not trusted", "server not trusted"])
        let trusted = try #require(records.first)
        #expect(Set(trusted.metadata.keys) == ["trust.host", "trust.policy", "trust.decision", "trust.pins_seen"])
        #expect(trusted.metadata["trust.host"] == "good.lab.test" && trusted.metadata["trust.decision"] == "trusted")
        #expect(records[1].metadata["trust.host"] == "elsewhere.lab.test")
        #expect(records[1].metadata["trust.reasons"].map { "\($0)" }?.contains("name-mismatch") == true, "\(records[1].metadata)")
        let mismatch = records[2]
        #expect(mismatch.metadata["trust.reasons"].map { "\($0)" }?.contains("pin-mismatch") == true)
        #expect(mismatch.metadata["trust.pins_expected"].map { "\($0)" }?.contains(wrongPin.description) == true)
        #expect(mismatch.metadata["trust.pins_seen"].map { "\($0)" }?.contains(SPKIPin(certificate: Lab.chain("good")[0]).description) == true)
    }

    @Test func clientAuthenticationCallbackForServers() async throws {
        let authentication = ClientAuthentication(anchors: [Lab.pki.root.certificate])
        let callback = authentication.verificationCallback()  // no record: a server that reads the metadata instead
        let client = try #require(Lab.pki.clients["client"])
        let path = try #require(try Self.chain(try await Self.verify(callback, try Self.nio(client.chain))))
        #expect(path.first == client.certificate.derBytes && path.last == Lab.pki.root.certificate.derBytes)
        let record = ClientAuthenticationRecord()
        let foreign = try #require(Lab.pki.clients["client-foreign"])
        guard case .failed = try await Self.verify(authentication.verificationCallback(record: record), try Self.nio(foreign.chain)) else {
            Issue.record("a foreign client was verified")
            return
        }
        #expect(record.decision?.isTrusted == false && record.verifiedClient == nil)
    }

    @Test func convertsNIOSSLCertificates() async throws {
        let trust = try ServerTrustVerifier.serverTrust(presented: try Self.nio(Lab.chain("good")), peerName: try PeerName(host: "good.lab.test"))
        #expect(trust.presentedChain == Lab.chain("good"))
        #expect(trust.peerName?.description == "good.lab.test")
        // A leaf this engine refuses to parse (RSA 1024, made by openssl): the reasons, not a crash.
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else {
            print("skipped the weak-leaf case: openssl is not installed")
            return
        }
        let dir = try temporaryDirectory()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "req", "-x509", "-newkey", "rsa:1024", "-nodes", "-keyout", dir + "/k.pem", "-out", dir + "/c.pem", "-days", "2", "-subj", "/CN=weak.lab.test",
        ]
        process.standardError = FileHandle.nullDevice
        try process.run()
        _ = await exited(process)
        let weak = try NIOSSLCertificate.fromPEMFile(dir + "/c.pem")
        do {
            _ = try ServerTrustVerifier.serverTrust(presented: weak, peerName: nil)
            Issue.record("a 1024-bit RSA leaf was converted")
        } catch {
            #expect(error.reasons.contains { $0.code == "weak-key" }, "\(error)")
        }
    }
}

import Foundation
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

/// `ClientTLSConfiguration`: a trust configuration entry as a NIOSSL `TLSConfiguration` for clients without a
/// verification callback — anchors, minimum TLS version and client identity applied by BoringSSL in real
/// handshakes with the lab's servers; pins, revocation, CT, reports and overrides listed as not applied.
@Suite("ClientTLSConfiguration: anchors, TLS minimum and identity from a configuration entry; the rest named", .paced)
struct ClientTLSConfigurationTests {
    /// A TLS handshake with BoringSSL's own verification under `configuration`, checking `host`.
    private func handshake(_ configuration: TLSConfiguration, host: String, port: Int) async throws {
        let context = try NIOSSLContext(configuration: configuration)
        let channel = try await TLSHandshake.connect(port: port) { try NIOSSLClientHandler(context: context, serverHostname: host) }
        channel.close(promise: nil)
    }

    /// A configuration file in a folder of its own, with the lab's roots beside it as `roots.pem`.
    /// The lab's CT logs are beside it as `logs.json` (named by the file's top-level `ctLogList`).
    private func evaluator(_ entry: String, files: [String: String] = [:]) throws -> ConfiguredTrustEvaluator {
        let folder = try temporaryDirectory()
        try Lab.pki.trustedRoots.map(\.pemString).joined(separator: "\n").write(toFile: folder + "/roots.pem", atomically: true, encoding: .utf8)
        try LabCTLog.logList(Lab.pki.ctLogs).write(toFile: folder + "/logs.json", atomically: true, encoding: .utf8)
        for (name, text) in files { try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8) }
        let path = folder + "/trust.json"
        try #"{"version": 1, "ctLogList": "logs.json", "base": {}, "hosts": [\#(entry)]}"#.write(toFile: path, atomically: true, encoding: .utf8)
        return try ConfiguredTrustEvaluator(contentsOf: path)
    }

    @Test func anchorsBecomeBoringSSLsRootsAndTheHostIsVerified() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        try await withTeardown({ try? await server.shutdown() }) {
            let configured = try evaluator(#"{"host": "good.lab.test", "anchors": {"certificates": ["roots.pem"], "replaceSystem": true}}"#)
            let tls = try configured.clientTLSConfiguration(forHost: "good.lab.test")
            #expect(tls.matched?.description == "good.lab.test")
            try await handshake(tls.tlsConfiguration, host: "good.lab.test", port: server.port)
            // The base entry (system roots only) does not trust the lab.
            let base = try configured.clientTLSConfiguration(forHost: "other.example")
            #expect(base.matched == nil)
            await #expect(throws: NIOSSLError.self) { try await handshake(base.tlsConfiguration, host: "good.lab.test", port: server.port) }
        }
    }

    /// NIOSSL checks the name (`good`'s certificate also names 127.0.0.1, which NIOSSL's check accepts for any
    /// host name on a loopback connection, so a certificate without an IP address is used here).
    @Test func theHostNameIsChecked() async throws {
        let server = try await LabServer.start("wrong-host", pki: Lab.pki)
        try await withTeardown({ try? await server.shutdown() }) {
            let configured = try evaluator(#"{"host": "*.lab.test", "anchors": {"certificates": ["roots.pem"], "replaceSystem": true}}"#)
            let tls = try configured.clientTLSConfiguration(forHost: "other.lab.test")
            try await handshake(tls.tlsConfiguration, host: "other.lab.test", port: server.port)
            await #expect(throws: (any Error).self) { try await handshake(tls.tlsConfiguration, host: "wrong-host.lab.test", port: server.port) }
        }
    }

    @Test func theEntrysMinimumTLSVersionIsApplied() async throws {
        let server = try await LabServer.start(
            name: "good", host: "good.lab.test", chain: Lab.chain("good"), privateKey: try #require(Lab.pki.servers["good"]?.privateKey),
            maximumTLSVersion: .tlsv12)
        try await withTeardown({ try? await server.shutdown() }) {
            let anchors = #""anchors": {"certificates": ["roots.pem"], "replaceSystem": true}"#
            let tls12 = try evaluator(#"{"host": "good.lab.test", \#(anchors)}"#).clientTLSConfiguration(forHost: "good.lab.test")
            #expect(tls12.tlsConfiguration.minimumTLSVersion == .tlsv12)
            try await handshake(tls12.tlsConfiguration, host: "good.lab.test", port: server.port)
            let tls13 = try evaluator(#"{"host": "good.lab.test", "minimumTLSVersion": "1.3", \#(anchors)}"#).clientTLSConfiguration(forHost: "good.lab.test")
            #expect(tls13.tlsConfiguration.minimumTLSVersion == .tlsv13)
            await #expect(throws: NIOSSLError.self) { try await handshake(tls13.tlsConfiguration, host: "good.lab.test", port: server.port) }
        }
    }

    @Test func theEntrysClientIdentityIsPresented() async throws {
        // TLS 1.2, so that a missing client certificate fails the handshake itself (TLS 1.3 refuses it afterwards).
        let server = try await LabServer.start(mutualTLS: .required, pki: Lab.pki, maximumTLSVersion: .tlsv12)
        try await withTeardown({ try? await server.shutdown() }) {
            let host = LabServer.MutualTLSMode.required.host
            let files = Lab.clientIdentityFiles
            let anchors = #""anchors": {"certificates": ["roots.pem"], "replaceSystem": true}"#
            let anonymous = try evaluator(#"{"host": "\#(host)", \#(anchors)}"#).clientTLSConfiguration(forHost: host)
            await #expect(throws: (any Error).self) { try await handshake(anonymous.tlsConfiguration, host: host, port: server.port) }
            // The leaf and its intermediate, relative to the configuration file; the key by absolute path.
            let chain = try String(contentsOfFile: files.cert, encoding: .utf8) + String(contentsOfFile: files.chain, encoding: .utf8)
            let identified = try evaluator(
                #"{"host": "\#(host)", \#(anchors), "clientIdentity": {"certificate": "chain.pem", "key": "\#(files.key)"}}"#, files: ["chain.pem": chain]
            ).clientTLSConfiguration(forHost: host)
            #expect(identified.tlsConfiguration.certificateChain.count == 2)
            try await handshake(identified.tlsConfiguration, host: host, port: server.port)
        }
    }

    @Test func whatBoringSSLCannotApplyIsListed() throws {
        let pins = (0..<2).map { (try? SPKIPin(digest: [UInt8](repeating: UInt8($0 + 1), count: 32)))?.description ?? "" }
        let configured = try evaluator(
            #"""
            {"host": "pinned.example", "pins": {"sha256": ["\#(pins[0])", "\#(pins[1])"]}, "mode": "report-only",
             "reportURIs": ["https://reports.example/pins"], "revocation": {"mode": "soft"},
             "certificateTransparency": {"mode": "enforce"}}
            """#)
        let tls = try configured.clientTLSConfiguration(forHost: "pinned.example")
        #expect(tls.notApplied.contains(.pins(count: 2, mode: .reportOnly)))
        #expect(tls.notApplied.contains(.reportURIs(count: 1)))
        #expect(tls.notApplied.contains(.revocation(.soft)))
        #expect(tls.notApplied.contains(.certificateTransparency(.enforce)))
        #expect(tls.notApplied.contains(.keyAndSignatureMinimums(rsaBits: 2048, ecBits: 256)))
        #expect(tls.notApplied.contains { $0.description.contains("not pinned") })
        // An entry with nothing BoringSSL lacks but the engine's minimums.
        let plain = try configured.clientTLSConfiguration(forHost: "plain.example")
        #expect(plain.notApplied == [.keyAndSignatureMinimums(rsaBits: 2048, ecBits: 256)])
    }

    /// An entry made in code, never checked by the loader: an empty pin set (under which the engine refuses every
    /// chain) is still named as not applied, and revocation switched off is not.
    @Test func anEmptyPinSetIsNamedAndRevocationOffIsNot() throws {
        var entry = TrustConfiguration.Entry(host: nil)
        entry.anchors = TrustConfiguration.Anchors(pem: Lab.pki.trustedRoots.map(\.pemString), replaceSystem: true)
        entry.pins = TrustConfiguration.Pins(sha256: [])
        entry.revocation = TrustConfiguration.Revocation(mode: .off)
        let tls = try ClientTLSConfiguration(entry: entry, baseDirectory: try temporaryDirectory())
        #expect(tls.notApplied.contains(.pins(count: 0, mode: .enforce)))
        #expect(!tls.notApplied.contains { if case .revocation = $0 { true } else { false } })
    }

    @Test func unreadableFilesAreTypedErrors() throws {
        let configured = try evaluator(#"{"host": "id.example", "clientIdentity": {"pkcs12": "missing.p12"}}"#)
        #expect {
            try configured.clientTLSConfiguration(forHost: "id.example")
        } throws: { error in
            guard case .clientIdentity(let inner) = (error as? ClientTLSConfigurationError)?.detail else { return false }
            return inner.source.hasSuffix("missing.p12")
        }
        let entry = try TrustConfiguration.parse(#"{"version": 1, "base": {"anchors": {"certificates": ["nowhere.pem"]}}}"#).base
        #expect {
            try ClientTLSConfiguration(entry: entry, baseDirectory: try temporaryDirectory())
        } throws: { error in
            guard case .anchors = (error as? ClientTLSConfigurationError)?.detail else { return false }
            return true
        }
    }
}

import Foundation
import GRPCCore
import PinnedGRPC
import Synchronization
import Testing
import Trust
import TrustGRPC
import TrustNIO

/// A gRPC client from a trust configuration file: the entry for the target host gives the anchors, the pins and
/// the client identity presented to a mutual-TLS server.
@Suite struct ConfiguredGRPCTests {
    /// The lab written to a folder of its own (keys private from their first byte, as `LabPKI.write` makes them),
    /// with a configuration pinning good.lab.test to the issuing CA and presenting the lab `client` identity.
    /// The client trust is made from it (the identity read), then the folder removed.
    static func trust(
        port: Int, mode: String = "enforce", onReport: (@Sendable (PinFailureReport, [URL]) -> Void)? = nil
    ) throws -> GRPCClientTrust {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("grpc-config-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try GRPCLab.pki.write(to: folder)
        let pins = try GRPCLab.pins.map { "\"\($0)\"" }.joined(separator: ", ")
        let entry = """
            {"host": "good.lab.test", "mode": "\(mode)", "reportURIs": ["https://reports.lab.test/pins"], "anchors": {"certificates": ["roots.pem"], "replaceSystem": true}, "pins": {"sha256": [\(pins)]},
             "clientIdentity": {"certificate": "clients/client/chain.pem", "key": "clients/client/key.pem"}}
            """
        let path = folder + "/trust.json"
        try #"{"version": 1, "base": {}, "hosts": [\#(entry)]}"#.write(toFile: path, atomically: true, encoding: .utf8)
        return try GRPCClientTrust(
            host: "good.lab.test", port: port, configuration: try ConfiguredTrustEvaluator(contentsOf: path), onReport: onReport)
    }

    @Test func theEntryForTheHostGivesPinsAndTheClientIdentity() async throws {
        let server = try await GRPCLab.startServer("good", clientTrust: GRPCServerTrust(ClientAuthentication(anchors: [GRPCLab.pki.root.certificate])))
        let trust = try Self.trust(port: server.port)
        // What the entry gives the channel: the host, the client identity, the TLS minimum; nothing to warn about.
        #expect(trust.clientIdentity != nil && trust.host == "good.lab.test" && trust.minimumTLSVersion == .tls12 && trust.warnings.isEmpty)
        let answer = try await GRPCLab.withEcho(trust, port: server.port) { try await $0.get("configured") }
        await server.stop()
        #expect(answer.hasPrefix("CN=lab client") && answer.hasSuffix(": configured"))
    }

    @Test func theEntrysPinsRefuseTheMITMChain() async throws {
        let server = try await GRPCLab.startServer("mitm")
        let trust = try Self.trust(port: server.port)
        let error = await GRPCLab.rpcError { _ = try await GRPCLab.withEcho(trust, port: server.port) { try await $0.get("hello") } }
        await server.stop()
        let reasons = try #require(error?.trustDecision?.reasons)
        #expect(reasons.contains { $0.kind == .pinMismatch })
    }

    @Test func aReportOnlyEntryLetsTheMITMChainThroughAndReportsIt() async throws {
        let server = try await GRPCLab.startServer("mitm")
        let reports = ReportBox()
        let trust = try Self.trust(port: server.port, mode: "report-only") { reports.append($0, $1) }
        let answer = try await GRPCLab.withEcho(trust, port: server.port) { try await $0.get("hello") }
        await server.stop()
        #expect(answer.hasSuffix(": hello"))
        let report = try #require(reports.all.first)
        #expect(report.0.validationResult == "pin-validation-failed" && !report.0.enforceMode && report.0.hostname == "good.lab.test")
        #expect(report.1 == [URL(string: "https://reports.lab.test/pins")])
    }

    @Test func anEnforcedEntryWhosePinsHoldReportsNothing() async throws {
        let server = try await GRPCLab.startServer("good")
        let reports = ReportBox()
        let trust = try Self.trust(port: server.port) { reports.append($0, $1) }
        _ = try await GRPCLab.withEcho(trust, port: server.port) { try await $0.get("quiet") }
        await server.stop()
        #expect(reports.all.isEmpty)
    }
}

/// The reports an `onReport` closure received, in order.
final class ReportBox: Sendable {
    private let reports = Mutex<[(PinFailureReport, [URL])]>([])
    func append(_ report: PinFailureReport, _ uris: [URL]) { reports.withLock { $0.append((report, uris)) } }
    var all: [(PinFailureReport, [URL])] { reports.withLock { $0 } }
}

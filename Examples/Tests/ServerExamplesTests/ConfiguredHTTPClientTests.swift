import AsyncHTTPClient
import AsyncHTTPClientTLS
import Foundation
import Testing
import TrustLab

/// The AsyncHTTPClient example against the lab's `good` server: the configuration file's anchors are what makes
/// it trusted, and an entry with pins is refused unless accepted as not applied.
@Suite struct ConfiguredHTTPClientTests {
    /// A configuration file whose base entry trusts only the lab's roots, with `extra` added to the entry.
    func configurationFile(_ extra: String = "") throws -> String {
        let folder = NSTemporaryDirectory() + "swift-trust-ahc-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Lab.pki.trustedRoots.map(\.pemString).joined(separator: "\n").write(toFile: folder + "/roots.pem", atomically: true, encoding: .utf8)
        let text = #"{"version": 1, "base": {"anchors": {"certificates": ["roots.pem"], "replaceSystem": true}\#(extra)}}"#
        try text.write(toFile: folder + "/trust.json", atomically: true, encoding: .utf8)
        return folder + "/trust.json"
    }

    /// Removes the folder ``configurationFile(_:)`` made for `file`.
    func removeFolder(of file: String) {
        try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent)
    }

    @Test func theFilesAnchorsTrustTheLab() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        // 127.0.0.1: AsyncHTTPClient resolves the URL's host itself; the lab's certificate names that address.
        let url = "https://127.0.0.1:\(server.port)/"
        let file = try configurationFile()
        defer { removeFolder(of: file) }
        let (client, warnings) = try makeConfiguredHTTPClient(configurationFile: file, host: "127.0.0.1")
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
        #expect(response.status.code == 200)
        #expect(warnings.contains { $0.contains("minimums") })
        try await client.shutdown()
        // Without the file's anchors (the system's only), the same server is refused.
        let plain = HTTPClient(eventLoopGroupProvider: .singleton)
        await #expect(throws: (any Error).self) { _ = try await plain.execute(HTTPClientRequest(url: url), timeout: .seconds(30)) }
        try await plain.shutdown()
        try await server.shutdown()
    }

    @Test func pinsAreRefusedUnlessAcceptedAsNotApplied() throws {
        let pins = #", "pins": {"sha256": ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "sha256/AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="]}"#
        let path = try configurationFile(pins)
        defer { removeFolder(of: path) }
        #expect(throws: UnpinnedConnectionRefused.self) { try makeConfiguredHTTPClient(configurationFile: path, host: "api.example") }
        let (client, warnings) = try makeConfiguredHTTPClient(configurationFile: path, host: "api.example", acceptingUnpinned: true)
        #expect(warnings.contains { $0.contains("2 pins (enforce) not applied") })
        try client.syncShutdown()
    }
}

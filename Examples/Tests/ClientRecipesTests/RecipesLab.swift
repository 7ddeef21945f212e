// Testing a client with the package's lab: `TrustLabPKI` makes a PKI at test time (a root, an intermediate, servers
// good and bad, client identities), `TrustLab` serves it on loopback. A user's tests run their own client code
// against it as these do, with no network and no certificate files checked in.
import Foundation
import Trust
import TrustHTTP
import TrustLab
import TrustLabPKI

enum RecipesLab {
    /// One PKI per test process: key generation is the slow part.
    static let pki: LabPKI = {
        do { return try LabPKI.make() } catch { fatalError("cannot make the lab PKI: \(error)") }
    }()

    /// A client configuration that trusts only the lab's roots and reaches the lab's names on 127.0.0.1.
    static func configuration(_ configure: (inout TrustHTTPClientConfiguration) throws -> Void = { _ in }) rethrows -> TrustHTTPClientConfiguration {
        var configuration = TrustHTTPClientConfiguration()
        configuration.serverTrust = DefaultTrustEvaluator(anchors: .only(pki.trustedRoots))
        configuration.resolve = LabPKI.loopbackResolve
        configuration.requestTimeout = .seconds(30)
        configuration.credentialStore = nil
        try configure(&configuration)
        return configuration
    }

    /// Runs `body` with the lab server `name` started and a client for it, and shuts both down.
    static func withServer<T>(
        _ name: String, protocols: LabServer.Protocols = .http2AndHTTP1,
        configure: (inout TrustHTTPClientConfiguration) throws -> Void = { _ in },
        _ body: (LabServer, TrustHTTPClient) async throws -> T
    ) async throws -> T {
        let server = try await LabServer.start(name, pki: pki, protocols: protocols)
        let client: TrustHTTPClient
        do {
            client = try TrustHTTPClient(configuration: try configuration(configure))
        } catch {
            try await server.shutdown()
            throw error
        }
        let result = await Result { try await body(server, client) }
        await client.shutdown()
        try await server.shutdown()
        return try result.get()
    }

    /// `path` on `server`, as a URL.
    static func url(_ server: LabServer, _ path: String) throws -> URL {
        guard let url = URL(string: server.baseURL + path) else { throw TrustHTTPClientError(.badURL, "bad lab URL") }
        return url
    }

    /// A configuration that pins `pins` over the lab's roots.
    static func pinned(_ pins: Set<SPKIPin>) -> (inout TrustHTTPClientConfiguration) throws -> Void {
        { $0.serverTrust = try PublicKeysTrustEvaluator(pins: pins, anchors: .only(pki.trustedRoots)) }
    }

    /// Writes the lab's roots, as PEM, to `lab-roots.pem` in `folder` (for a configuration file's `anchors`).
    static func writeRoots(into folder: URL) throws {
        let pem = try pki.trustedRoots.map { try $0.serializeAsPEM().pemString }.joined(separator: "\n")
        try Data(pem.utf8).write(to: folder.appendingPathComponent("lab-roots.pem"))
    }

    /// The lab's roots as a configuration file's inline `"pem"` array members (JSON strings, comma-separated).
    static var rootsJSON: String {
        pki.trustedRoots.map { String(reflecting: (try? $0.serializeAsPEM().pemString) ?? "") }.joined(separator: ", ")
    }

    /// A folder of its own under the temporary folder, removed after `body`.
    static func withTemporaryFolder<T>(_ body: (URL) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("client-recipes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(folder)
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

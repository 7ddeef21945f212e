import Foundation
import NIOCore
import NIOPosix
import Testing
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// `TrustHTTPClientError` as Foundation code expects an error: a `LocalizedError` whose description is the
/// error's own (never a secret), and the lower-level error kept as an error.
@Suite("SessionError: LocalizedError, the underlying error", .paced)
struct SessionErrorTests {
    @Test func refusedConnectionKeepsNIOsError() async throws {
        // A port nobody listens on: bound (so no other test's server can take it while this runs) but not listening.
        let refusing = try RefusingPort()
        defer { refusing.close() }
        let port = refusing.port
        let session = try labSession()
        let secret = "Very-S3cret-Pass"
        let error = try #require(
            await sessionError { try await session.data(for: TrustHTTPClientRequest(url: URL(string: "https://alice:\(secret)@127.0.0.1:\(port)/")!)) })
        await session.shutdown()
        #expect(error.code == .cannotConnectToHost)
        let underlying = try #require(error.underlyingError)
        #expect(error.underlying == "\(underlying)")
        #expect(error.localizedDescription == error.description)
        #expect(!error.localizedDescription.contains(secret))
        #expect((error as any Error).localizedDescription.contains("cannotConnectToHost"))
    }
}

import Foundation
import HTTPTypes
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// Bounds a server cannot push past: collected bodies, redirects to other schemes, request
/// header injection, the read timeout — against the ordinary lab server (the hostile server's
/// attacks are in `HostileServerTests`).
@Suite("Response limits and request hygiene", .paced)
struct ResponseLimitTests {
    @Test func defaultsAreDocumentedValues() {
        let limits = TrustHTTPClientConfiguration().responseLimits
        #expect(limits.maximumBodySize == 64 << 20)
        #expect(limits.maximumHeadSize == 307_200)
        #expect(limits.maximumHeaderFieldSize == 102_400)
        #expect(TrustHTTPClientConfiguration().readTimeout == .seconds(60))
        #expect(TrustHTTPClientConfiguration().resourceTimeout == nil)
    }

    /// A body announced larger than the limit fails before it is read, typed, and the connection
    /// is not reused with the rest of the body pending; HTTP/1.1 and HTTP/2.
    @Test(arguments: [LabServer.Protocols.http1Only, .http2Only])
    func collectedBodyOverTheLimitFails(_ protocols: LabServer.Protocols) async throws {
        let server = try await LabServer.start("good", pki: Lab.pki, protocols: protocols)
        let session = try labSession()
        var request = TrustHTTPClientRequest(url: url(server, "/bytes/100000"))
        request.maximumResponseBodySize = 1_000
        let error = await sessionError { try await session.data(for: request) }
        #expect(error?.code == .responseTooLarge)
        #expect(error?.limit == ResponseLimit(.body, observed: 100_000, limit: 1_000))
        #expect(error?.message == "response body too large: 100000 > 1000 bytes")
        // Exactly at the limit is fine.
        request.maximumResponseBodySize = 100_000
        #expect(try await session.data(for: request).body.readableBytes == 100_000)
        await expectUsable(session, server)
        await session.shutdown()
        try await server.shutdown()
    }

    /// The session-wide limit applies when the request has none.
    @Test func sessionLimitApplies() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession { $0.responseLimits.maximumBodySize = 10 }
        let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(server, "/bytes/11"))) }
        #expect(error?.limit?.kind == .body)
        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server, "/bytes/10"))).body.readableBytes == 10)
        await session.shutdown()
        try await server.shutdown()
    }

    /// `Location: file:…` (or any scheme but http/https) is refused, never followed nor returned as a plain 302.
    @Test(arguments: ["file:///etc/passwd", "ftp://127.0.0.1/x", "data:text/plain,hi", "javascript:alert(1)", "gopher://127.0.0.1:70/"])
    func redirectToAnotherSchemeIsRefused(_ location: String) async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession()
        let target = url(server, "/redirect?to=" + (location.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
        let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: target)) }
        #expect(error?.code == .unsupportedURL, "\(String(describing: error))")
        await expectUsable(session, server)
        await session.shutdown()
        try await server.shutdown()
    }

    /// A header value with CR, LF or NUL cannot split the request: `HTTPFields` holds no such byte (each reads
    /// as a space), so the server sees the one field and no field injected after it. A name that is not a
    /// token has no `HTTPField.Name`, so it cannot be sent at all.
    @Test(arguments: ["a\r\nx-injected: 1", "a\nx-injected: 1", "a\rx-injected: 1", "a\u{0}x-injected: 1"])
    func headerInjectionCannotSplitTheRequest(_ value: String) async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession()
        let request = TrustHTTPClientRequest(url: url(server, "/headers"), headers: [.authorization: "Bearer s3cret-" + value])
        #expect(request.headers[.authorization] == "Bearer s3cret-a x-injected: 1" || request.headers[.authorization] == "Bearer s3cret-a  x-injected: 1")
        let response = try await session.data(for: request)
        #expect(response.statusCode == 200)
        let lines = response.text.split(separator: "\n").map { $0.lowercased() }
        #expect(lines.filter { $0.hasPrefix("authorization:") }.count == 1, "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("x-injected") }, "\(lines)")
        #expect(HTTPField.Name("x bad") == nil)
        await session.shutdown()
        try await server.shutdown()
    }

    /// The read timeout fires when the server says nothing for that long, well before the request
    /// timeout; the same session then works.
    @Test func readTimeoutFiresOnASilentServer() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession { configuration in
            configuration.readTimeout = .milliseconds(500)
            configuration.requestTimeout = .seconds(20)
        }
        let failure = await timedFailure { try await session.data(for: TrustHTTPClientRequest(url: url(server, "/slow?ms=18000"))) }
        report("read timeout 500 ms, server silent 18 s", failure)
        #expect(failure.error?.code == .timedOut)
        #expect(failure.error?.message.contains("read timeout") == true)
        #expect(failure.elapsed < .seconds(15), "the read timeout, not the server nor the 20 s request timeout, ended the request")
        await session.shutdown()
        // A server that answers within the read timeout is fine.
        let patient = try labSession { $0.readTimeout = .seconds(10) }
        #expect(try await patient.data(for: TrustHTTPClientRequest(url: url(server, "/slow?ms=100"))).statusCode == 200)
        await patient.shutdown()
        try await server.shutdown()
    }
}

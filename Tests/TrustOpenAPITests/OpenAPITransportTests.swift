import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

@testable import TrustOpenAPI

/// `TrustHTTPClientTransport`: an OpenAPI client's requests through a `TrustHTTPClient` — bodies both ways, headers,
/// paths and queries joined to the server URL, the session's trust decisions and limits.
@Suite("OpenAPI: TrustHTTPClientTransport", .timeLimit(.minutes(5)), .paced)
struct OpenAPITransportTests {
    @Test func postsABodyAndStreamsTheResponse() async throws {
        try await withLabServers(["good"]) { servers in
            let transport = TrustHTTPClientTransport(client: try labSession())
            var request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/echo?x=1")
            request.headerFields[.contentType] = "text/plain"
            let (response, body) = try await transport.send(request, body: HTTPBody("ping"), baseURL: url(servers["good"]!), operationID: "echo")
            #expect(response.status == .ok)
            #expect(response.headerFields[.contentLength] != nil)
            let text = try await String(collecting: try #require(body), upTo: 1 << 20)
            #expect(text == "POST\nping")
            await transport.client.shutdown()
        }
    }

    @Test func sendsHeadersAndJoinsPaths() async throws {
        try await withLabServers(["good"]) { servers in
            let transport = TrustHTTPClientTransport(client: try labSession())
            var request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/headers")
            request.headerFields[HTTPField.Name("x-operation")!] = "list"
            // The lab URL ends with a slash: one slash between it and the path.
            let base = url(servers["good"]!)
            #expect(base.absoluteString.hasSuffix("/"))
            let (response, body) = try await transport.send(request, body: nil, baseURL: base, operationID: "headers")
            #expect(response.status.code == 200)
            let text = try await String(collecting: try #require(body), upTo: 1 << 20)
            #expect(text.contains("x-operation: list"))
            let head = HTTPRequest(method: .head, scheme: nil, authority: nil, path: "/")
            #expect(try await transport.send(head, body: nil, baseURL: base, operationID: "head").1 == nil)
            await transport.client.shutdown()
        }
        #expect(
            try TrustHTTPClientTransport.url(URL(string: "https://api.example.com/v1")!, path: "/pets?limit=2").absoluteString
                == "https://api.example.com/v1/pets?limit=2")
        #expect(
            try TrustHTTPClientTransport.url(URL(string: "https://api.example.com/v1/")!, path: "/pets").absoluteString == "https://api.example.com/v1/pets")
    }

    /// Through a pinned session: GET and POST get the lab's answers; a pin mismatch is the transport's
    /// error, a `TrustHTTPClientError` carrying the decision and its reasons.
    @Test func pinnedSessionAndPinMismatch() async throws {
        try await withLabServers(["good"]) { servers in
            let pinned = try labSession(try PublicKeysTrustEvaluator(pins: [Lab.pki.intermediate.certificate.spkiPin], anchors: Lab.anchors))
            let transport = TrustHTTPClientTransport(client: pinned)
            let get = try await transport.send(
                HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/"), body: nil, baseURL: url(servers["good"]!), operationID: "root")
            #expect(get.0.status == .ok)
            #expect(try await String(collecting: try #require(get.1), upTo: 1 << 20).hasPrefix("hello from"))
            let post = try await transport.send(
                HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/echo"), body: HTTPBody("pinned"), baseURL: url(servers["good"]!),
                operationID: "echo")
            #expect(try await String(collecting: try #require(post.1), upTo: 1 << 20) == "POST\npinned")
            await pinned.shutdown()

            let wrongPin = try SPKIPin(parsing: "sha256/" + Data(repeating: 9, count: 32).base64EncodedString())
            let mismatched = TrustHTTPClientTransport(client: try labSession(try PublicKeysTrustEvaluator(pins: [wrongPin], anchors: Lab.anchors)))
            do {
                _ = try await mismatched.send(
                    HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/"), body: nil, baseURL: url(servers["good"]!), operationID: "root")
                Issue.record("a pin mismatch was accepted")
            } catch let error as TrustHTTPClientError {
                #expect(error.code == .serverCertificateUntrusted)
                #expect(error.trustDecision?.reasons.map(\.code).contains("pin-mismatch") == true)
            }
            await mismatched.client.shutdown()
        }
    }

    /// The session decides trust: an expired server is refused before any request is sent.
    @Test func refusedTrustFails() async throws {
        try await withLabServers(["expired"]) { servers in
            let transport = TrustHTTPClientTransport(client: try labSession())
            let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/")
            await #expect(throws: TrustHTTPClientError.self) {
                _ = try await transport.send(request, body: nil, baseURL: url(servers["expired"]!), operationID: "get")
            }
            await transport.client.shutdown()
        }
    }

    /// A body that can be read only once is collected (the session may send a request again), and one over the limit
    /// fails before anything is sent; a body that can be read again streams, whatever its size.
    @Test func requestBodyIsBoundedWhenItMustBeCollected() async throws {
        try await withLabServers(["good"]) { servers in
            let transport = TrustHTTPClientTransport(client: try labSession(), maximumRequestBodySize: 8)
            let request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/echo")
            func once(_ text: String) -> HTTPBody {
                let (stream, continuation) = AsyncStream.makeStream(of: ArraySlice<UInt8>.self)
                continuation.yield(ArraySlice(text.utf8))
                continuation.finish()
                return HTTPBody(stream, length: .unknown, iterationBehavior: .single)
            }
            await #expect(throws: (any Error).self) {
                _ = try await transport.send(request, body: once("more than eight bytes"), baseURL: url(servers["good"]!), operationID: "echo")
            }
            let (small, smallBody) = try await transport.send(request, body: once("eight!!!"), baseURL: url(servers["good"]!), operationID: "echo")
            #expect(small.status == .ok)
            #expect(try await String(collecting: try #require(smallBody), upTo: 100) == "POST\neight!!!")
            let (streamed, streamedBody) = try await transport.send(
                request, body: HTTPBody("more than eight bytes"), baseURL: url(servers["good"]!), operationID: "echo")
            #expect(streamed.status == .ok)
            #expect(try await String(collecting: try #require(streamedBody), upTo: 100) == "POST\nmore than eight bytes")
            await transport.client.shutdown()
        }
    }
}

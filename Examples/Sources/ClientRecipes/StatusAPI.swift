// A swift-openapi-generator client sends through any `ClientTransport`; `TrustHTTPClientTransport` makes that a
// `TrustHTTPClient`, pinned, with its limits and its typed errors. The generated `Client` is not built here (the
// examples run no generator): `StatusAPI` calls the transport exactly as a generated operation does — an
// `HTTPRequest` with a path relative to the server URL, an `HTTPBody`, the operation's ID.
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Trust
import TrustHTTP
import TrustOpenAPI

/// A two-operation API (`GET /status/{code}`, `POST /echo`) called through the transport.
public struct StatusAPI: Sendable {
    /// The transport a generated client would be given: `Client(serverURL:transport:)`.
    public let transport: TrustHTTPClientTransport
    /// The API's server URL.
    public let serverURL: URL

    /// The API at `serverURL`, through `client`; request bodies that can be read only once are collected up to 1 MiB.
    public init(serverURL: URL, client: TrustHTTPClient) {
        self.serverURL = serverURL
        self.transport = TrustHTTPClientTransport(client: client, maximumRequestBodySize: 1 << 20)
    }

    /// `GET /status/{code}`: the status the server answered.
    public func status(_ code: Int) async throws -> HTTPResponse.Status {
        let (response, _) = try await transport.send(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/status/\(code)"), body: nil, baseURL: serverURL, operationID: "getStatus")
        return response.status
    }

    /// `POST /echo`: what the server read of `text`, sent as a body that can be read only once (the transport
    /// collects it, so that the client can send it again after a 401 or a 307).
    public func echo(_ text: String) async throws -> String {
        var request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/echo")
        request.headerFields[.contentType] = "text/plain"
        let body = HTTPBody(
            AsyncStream { continuation in
                continuation.yield(ArraySlice(text.utf8))
                continuation.finish()
            }, length: .known(Int64(text.utf8.count)), iterationBehavior: .single)
        let (_, responseBody) = try await transport.send(request, body: body, baseURL: serverURL, operationID: "echo")
        guard let responseBody else { return "" }
        return try await String(collecting: responseBody, upTo: 1 << 20)
    }

    /// What the API is called through, for the startup log.
    public var summary: String {
        "\(serverURL) through a TrustHTTPClient (\(transport.client.openConnectionCount) connections open); "
            + "single-pass request bodies up to \(transport.maximumRequestBodySize) bytes"
    }

    /// `GET {path}` for a path an operator typed: a path that does not join the server URL is refused before anything
    /// is sent, naming both.
    public func get(rawPath: String) async throws -> HTTPResponse.Status {
        do {
            let (response, _) = try await transport.send(
                HTTPRequest(method: .get, scheme: nil, authority: nil, path: rawPath), body: nil, baseURL: serverURL, operationID: "get")
            return response.status
        } catch let error as TrustHTTPClientTransport.InvalidRequestURL {
            throw StatusAPIError.badPath(path: error.path, server: error.baseURL.absoluteString, message: error.description)
        }
    }

    public enum StatusAPIError: Error, Equatable {
        case badPath(path: String, server: String, message: String)
    }

    /// The refusal behind a failed operation: the generated client wraps the transport's error in its `ClientError`.
    public static func refusal(in error: any Error) -> TrustDecision? {
        let underlying = (error as? ClientError)?.underlyingError ?? error
        return (underlying as? TrustHTTPClientError)?.trustDecision
    }
}

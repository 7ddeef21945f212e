import HTTPTypes
import OpenAPIRuntime
import TrustHTTP

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A swift-openapi-runtime `ClientTransport` that sends a generated client's requests through a
/// ``TrustHTTP/TrustHTTPClient``: every connection's server trust is decided by the client (its evaluators,
/// pins, trust configuration, challenge handlers), with its HTTP authentication, timeouts, limits and
/// telemetry.
///
/// ```swift
/// var configuration = TrustHTTPClientConfiguration()
/// configuration.serverTrust = evaluator
/// let httpClient = try TrustHTTPClient(configuration: configuration)
/// let client = Client(serverURL: try Servers.Server1.url(), transport: TrustHTTPClientTransport(client: httpClient))
/// ```
///
/// The response body streams, with the client's backpressure and read timeout. A request body that can be
/// read more than once (`HTTPBody.IterationBehavior.multiple`) streams too; one that can be read only once
/// is collected first, up to ``maximumRequestBodySize``, since the client may have to send a request again
/// (an authentication challenge, a 307 or 308 redirect). Errors are the client's ``TrustHTTP/TrustHTTPClientError`` (the generated client
/// wraps them in its `ClientError`).
public struct TrustHTTPClientTransport: ClientTransport {
    /// The client requests go through.
    public let client: TrustHTTPClient
    /// The largest request body that can be read only once, collected before it is sent; a larger one fails
    /// before anything is sent.
    public var maximumRequestBodySize: Int

    /// Sends requests through `client`; request bodies up to `maximumRequestBodySize` bytes (16 MiB by default).
    public init(client: TrustHTTPClient, maximumRequestBodySize: Int = 16 << 20) {
        self.client = client
        self.maximumRequestBodySize = maximumRequestBodySize
    }

    /// Sends `request` to `baseURL` joined with the request's path and query.
    public func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let url = try Self.url(baseURL, path: request.path)
        let response = try await client.bytes(
            for: TrustHTTPClientRequest(
                url: url, method: request.method.rawValue, headers: request.headerFields, body: try await Self.body(of: body, upTo: maximumRequestBodySize)))
        let length = response.headers[.contentLength].flatMap(Int64.init).map(HTTPBody.Length.known) ?? .unknown
        // `HTTPBody` carries `ArraySlice<UInt8>` chunks: each buffer is copied into one as the generated client reads it.
        let responseBody = request.method == .head ? nil : HTTPBody(response.body.map(\.readableBytesView), length: length, iterationBehavior: .single)
        return (HTTPResponse(status: response.status, headerFields: response.headers), responseBody)
    }

    /// The request body for `body`: streamed when it can be read again for a second send, else collected.
    private static func body(of body: HTTPBody?, upTo maximum: Int) async throws -> TrustHTTPClientRequest.Body? {
        guard let body else { return nil }
        let length: Int? = if case .known(let count) = body.length { Int(exactly: count) } else { nil }
        if body.iterationBehavior == .multiple { return .stream(length: length) { body } }
        return .bytes(try await [UInt8](collecting: body, upTo: maximum))
    }

    /// `baseURL` with `path` (which may carry a query) appended, as the OpenAPI transports join them.
    static func url(_ baseURL: URL, path: String?) throws -> URL {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false),
            let requestComponents = URLComponents(string: path ?? "")
        else { throw InvalidRequestURL(baseURL: baseURL, path: path ?? "") }
        components.percentEncodedPath =
            components.percentEncodedPath.hasSuffix("/") && requestComponents.percentEncodedPath.hasPrefix("/")
            ? String(components.percentEncodedPath.dropLast()) + requestComponents.percentEncodedPath
            : components.percentEncodedPath + requestComponents.percentEncodedPath
        components.percentEncodedQuery = requestComponents.percentEncodedQuery
        guard let url = components.url else { throw InvalidRequestURL(baseURL: baseURL, path: path ?? "") }
        return url
    }

    /// The base URL and the request's path do not make a URL.
    public struct InvalidRequestURL: Error, CustomStringConvertible {
        /// The server URL the client was given (its user-info is not shown).
        public var baseURL: URL
        /// The operation's path and query.
        public var path: String
        public var description: String {
            var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)
            components?.user = nil
            components?.password = nil
            return "cannot send to \(components?.string ?? "the server URL") with the path \(path)"
        }
    }
}

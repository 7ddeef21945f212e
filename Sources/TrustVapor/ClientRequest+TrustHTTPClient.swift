#if Vapor
    import Foundation
    import NIOCore
    import NIOHTTP1
    import TrustHTTP
    import Vapor

    extension TrustHTTPClientRequest {
        /// The session's request for Vapor's `request`: its method, URL, header fields in order, body and
        /// timeout. A URI Foundation cannot read as a URL fails here with ``TrustHTTP/TrustHTTPClientError/Code/badURL``;
        /// the session refuses the rest (no host, another scheme) as it refuses its own requests.
        init(_ request: ClientRequest) throws(TrustHTTPClientError) {
            // The URI's text is not quoted in the error: it may hold a password or a token in its query.
            guard let url = URL(string: request.url.string) else {
                throw TrustHTTPClientError(.badURL, "the client request's URI is not a valid URL")
            }
            self.init(
                url: url, method: request.method.rawValue, headers: request.headers.map { ($0.name, $0.value) },
                body: request.body.map { Data($0.readableBytesView) }, timeout: request.timeout.map { Duration($0) })
        }
    }

    extension ClientResponse {
        /// Vapor's response for the session's `response`: status, header fields in order, and the body in a
        /// buffer from `allocator` — no body (`nil`) when the response had none, as Vapor's own client says.
        init(_ response: TrustHTTPClientResponse, allocator: ByteBufferAllocator) {
            self.init(
                status: HTTPResponseStatus(statusCode: response.statusCode), headers: HTTPHeaders(response.headers.map { ($0.name, $0.value) }),
                body: response.body.isEmpty ? nil : allocator.buffer(bytes: response.body), byteBufferAllocator: allocator)
        }
    }
#endif

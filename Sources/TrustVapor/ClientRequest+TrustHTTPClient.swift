#if Vapor
    import Foundation
    import NIOCore
    import HTTPTypes
    import NIOHTTP1
    import NIOHTTPTypesHTTP1
    import TrustHTTP
    import Vapor

    extension TrustHTTPClientRequest {
        /// The session's request for Vapor's `request`: its method, URL, header fields in order (Vapor's
        /// `HTTPHeaders` as `HTTPFields`), body (its buffer, not copied) and timeout. A URI Foundation cannot read as a URL fails here with ``TrustHTTP/TrustHTTPClientError/Code/badURL``;
        /// the session refuses the rest (no host, another scheme) as it refuses its own requests.
        init(_ request: ClientRequest) throws(TrustHTTPClientError) {
            // The URI's text is not quoted in the error: it may hold a password or a token in its query.
            guard let url = URL(string: request.url.string) else {
                throw TrustHTTPClientError(.badURL, "the client request's URI is not a valid URL")
            }
            self.init(
                url: url, method: request.method.rawValue, headers: HTTPFields(request.headers, splitCookie: false),
                body: request.body.map { .bytes($0) }, timeout: request.timeout.map { Duration($0) })
        }
    }

    extension ClientResponse {
        /// Vapor's response for the session's `response`: status, header fields in order, and the body's buffer as
        /// received (not copied) — no body (`nil`) when the response had none, as Vapor's own client says.
        init(_ response: TrustHTTPClientResponse, allocator: ByteBufferAllocator) {
            self.init(
                status: HTTPResponseStatus(statusCode: response.statusCode), headers: HTTPHeaders(response.headers),
                body: response.body.readableBytes == 0 ? nil : response.body, byteBufferAllocator: allocator)
        }
    }
#endif

#if Vapor
    import Foundation
    import Logging
    import NIOCore
    import Trust
    import TrustHTTP
    import Vapor

    /// A Vapor `Client` that sends every request through a ``TrustHTTP/TrustHTTPClient``: `req.client` and
    /// `app.client` then make their HTTPS connections with the client's server trust (its evaluators, pins,
    /// trust configuration and challenge handlers, deciding inside the TLS handshake), its HTTP
    /// authentication, timeouts, limits, logs and metrics.
    ///
    /// Register it with `app.clients.use(.trustHTTP(configuration))` (see
    /// `Application.Clients.Provider.trustHTTP(_:)`). As Vapor's own client does, a copy made by
    /// ``delegating(to:)`` completes its futures on that event loop — the request's, for `req.client` — and
    /// one made by ``logging(to:)`` logs to that logger, with the request's metadata.
    ///
    /// A failed request fails with the client's `TrustHTTPClientError`: a refused server-trust decision carries
    /// its `TrustDecision` (``TrustHTTP/TrustHTTPClientError/trustDecision``), with every reason, so that a route can
    /// switch on why. The body of the response is read whole, up to the client's
    /// `ResponseLimits/maximumBodySize`.
    public struct TrustHTTPVaporClient: Client {
        /// The client every request goes through (shared by the copies Vapor makes per request).
        public let client: TrustHTTPClient
        /// The event loop this client's futures complete on.
        public let eventLoop: any EventLoop
        /// Allocates the response bodies' buffers.
        public let byteBufferAllocator: ByteBufferAllocator
        /// Where this client logs each request (at `debug`; the client's own lines go to its configured logger).
        public let logger: Logger?

        /// A client sending through `client`, completing its futures on `eventLoop`.
        public init(
            client: TrustHTTPClient, eventLoop: any EventLoop, logger: Logger? = nil, byteBufferAllocator: ByteBufferAllocator = ByteBufferAllocator()
        ) {
            self.client = client
            self.eventLoop = eventLoop
            self.logger = logger
            self.byteBufferAllocator = byteBufferAllocator
        }

        /// Sends `request` through the client; the future completes on ``eventLoop`` with the response, or
        /// fails with a `TrustHTTPClientError`.
        public func send(_ request: ClientRequest) -> EventLoopFuture<ClientResponse> {
            eventLoop.makeFutureWithTask { try await self.response(to: request) }
        }

        /// Sends `request` through the client and returns the response with its whole body. The request's
        /// `timeout`, when set, bounds the whole exchange, body included (else the client's
        /// `TrustHTTPClientConfiguration/requestTimeout` does).
        public func response(to request: ClientRequest) async throws(TrustHTTPClientError) -> ClientResponse {
            let outgoing = try TrustHTTPClientRequest(request)
            logger?.debug("client request", metadata: Self.metadata(outgoing.url, method: outgoing.method))
            do {
                let response = try await client.data(for: outgoing)
                logger?.debug("client response", metadata: Self.metadata(outgoing.url, method: outgoing.method, status: response.statusCode))
                return ClientResponse(response, allocator: byteBufferAllocator)
            } catch {
                let failure = TrustHTTPClientError(wrapping: error, url: outgoing.url)
                var metadata = Self.metadata(outgoing.url, method: outgoing.method)
                metadata["error.code"] = "\(failure.code)"
                logger?.debug("client request failed", metadata: metadata)
                throw failure
            }
        }

        /// A copy whose futures complete on `eventLoop` (Vapor's `req.client` passes the request's).
        public func delegating(to eventLoop: any EventLoop) -> any Client {
            TrustHTTPVaporClient(client: client, eventLoop: eventLoop, logger: logger, byteBufferAllocator: byteBufferAllocator)
        }

        /// A copy that logs to `logger` (Vapor's `req.client` passes the request's, with its `request-id`).
        public func logging(to logger: Logger) -> any Client {
            TrustHTTPVaporClient(client: client, eventLoop: eventLoop, logger: logger, byteBufferAllocator: byteBufferAllocator)
        }

        /// A copy that allocates response bodies with `byteBufferAllocator`.
        public func allocating(to byteBufferAllocator: ByteBufferAllocator) -> any Client {
            TrustHTTPVaporClient(client: client, eventLoop: eventLoop, logger: logger, byteBufferAllocator: byteBufferAllocator)
        }

        /// Method, host and port — never the path, query, user-info or a header (they may carry secrets);
        /// the host escaped, as it may come from a request's input.
        private static func metadata(_ url: URL, method: String, status: Int? = nil) -> Logger.Metadata {
            var metadata: Logger.Metadata = [
                "http.method": .string(DisplayText.escaped(method)), "http.host": .string(DisplayText.escaped(url.host ?? "")),
                "http.port": "\(url.port.map(String.init) ?? "")",
            ]
            if let status { metadata["http.status"] = "\(status)" }
            return metadata
        }
    }

    extension TrustHTTPClientError {
        /// `error` as the client threw it — always a `TrustHTTPClientError` — or, should anything else arrive, one
        /// that keeps it as its underlying error.
        init(wrapping error: any Error, url: URL) {
            switch error {
            case let error as TrustHTTPClientError: self = error
            case is CancellationError: self.init(.cancelled, "the request was cancelled", url: url)
            default: self.init(.networkConnectionLost, "the request failed", url: url, underlyingError: error)
            }
        }
    }
#endif

#if Vapor
    import Logging
    import TrustHTTP
    import Vapor

    extension Application.Clients.Provider {
        /// `app.client` and `req.client` send through a ``TrustHTTP/TrustHTTPClient`` made now with `configuration`, on the
        /// application's event loops; the application shuts it down when it shuts down.
        ///
        /// ```swift
        /// var configuration = TrustHTTPClientConfiguration()
        /// configuration.serverTrust = try PublicKeysTrustEvaluator(pins: pins)
        /// app.clients.use(.trustHTTP(configuration))
        /// ```
        ///
        /// With no logger in `configuration`, the session logs to the application's logger. A session that
        /// cannot be made (a client identity file that does not load) is logged as an error, and every
        /// request of the client fails with the `TrustHTTPClientError` that says why; make the session with `try`
        /// and register it with `.trustHTTP(session)` to fail at start-up instead.
        public static func trustHTTP(_ configuration: TrustHTTPClientConfiguration) -> Self {
            .init { application in
                var configuration = configuration
                if configuration.logger == nil { configuration.logger = application.logger }
                do {
                    let session = try TrustHTTPClient(configuration: configuration, eventLoopGroup: application.eventLoopGroup)
                    register(session, in: application)
                } catch {
                    let failure = TrustHTTPClientError(unavailable: error)
                    application.logger.error("cannot make the session of app.client", metadata: ["error.code": "\(failure.code)"])
                    application.clients.use { UnavailableTrustHTTPVaporClient(error: failure, eventLoop: $0.eventLoopGroup.next()) }
                }
            }
        }

        /// `app.client` and `req.client` send through `session`, which the application shuts down when it shuts
        /// down (do not share it with code that outlives the application).
        public static func trustHTTP(_ session: TrustHTTPClient) -> Self {
            .init { register(session, in: $0) }
        }

        private static func register(_ session: TrustHTTPClient, in application: Application) {
            application.lifecycle.use(TrustHTTPClientShutdown(session: session))
            application.clients.use {
                TrustHTTPVaporClient(client: session, eventLoop: $0.eventLoopGroup.next(), logger: $0.logger, byteBufferAllocator: $0.allocator)
            }
        }
    }

    extension TrustHTTPClientError {
        /// The error every request of a client whose session could not be made fails with.
        init(unavailable error: any Error) {
            self.init(.secureConnectionFailed, "the client's session could not be made", underlyingError: error)
        }
    }
#endif

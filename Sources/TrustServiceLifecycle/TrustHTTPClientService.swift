import ServiceLifecycle
import TrustHTTP

/// A ``TrustHTTP/TrustHTTPClient`` as a swift-service-lifecycle `Service`: run it in the application's
/// `ServiceGroup` beside its servers, and the client closes every connection when the group shuts
/// down gracefully (SIGTERM, when the group listens for it) or is cancelled — after the services
/// before it in the group, which may still be using it, have stopped.
///
/// ```swift
/// let client = try TrustHTTPClient(configuration: configuration)
/// let group = ServiceGroup(services: [server, TrustHTTPClientService(client)], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
///
/// Its own target (`TrustServiceLifecycle`), so that `TrustHTTP` users who do not run a service group do not
/// build swift-service-lifecycle.
public struct TrustHTTPClientService: Service {
    /// The client this service shuts down.
    package let client: TrustHTTPClient

    /// A service for `client`.
    public init(_ client: TrustHTTPClient) {
        self.client = client
    }

    /// Waits until the group shuts down gracefully or the task is cancelled, then shuts the client down
    /// (requests still in flight fail; see ``TrustHTTP/TrustHTTPClient/shutdown()``).
    public func run() async throws {
        try? await gracefulShutdown()
        await client.shutdown()
    }
}

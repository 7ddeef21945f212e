import ServiceLifecycle

/// Lab servers as a swift-service-lifecycle `Service`: they serve while the group runs and are shut down
/// when it shuts down gracefully (SIGTERM or SIGINT, when the group listens for them) or is cancelled —
/// so a test harness or a demo can run the lab in the same `ServiceGroup` as the code it exercises.
///
/// ```swift
/// let server = try await LabServer.start("good", pki: pki)
/// let group = ServiceGroup(services: [LabServerService([server]), TrustHTTPClientService(client)],
///                          gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
/// try await group.run()
/// ```
public struct LabServerService: Service {
    /// The servers this service shuts down.
    public let servers: [LabServer]

    /// A service for `servers` (already started).
    public init(_ servers: [LabServer]) {
        self.servers = servers
    }

    /// Waits until the group shuts down gracefully or the task is cancelled, then shuts every server down.
    public func run() async throws {
        try? await gracefulShutdown()
        for server in servers {
            try? await server.shutdown()
        }
    }
}

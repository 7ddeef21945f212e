import ServiceLifecycle
import TrustHTTP

/// A ``Trust/ReloadingTrustConfiguration`` polling its file as a swift-service-lifecycle `Service`: run it in
/// the application's `ServiceGroup`, and it polls (``Trust/ReloadingTrustConfiguration/run(pollingEvery:)``) until
/// the group shuts down gracefully or is cancelled. A file that is refused leaves the configuration in force; the
/// refusal goes to the configuration's observers (and a TrustHTTPClient's log, metrics and observer).
///
/// ```swift
/// let reloading = try ReloadingTrustConfiguration(contentsOf: "/etc/app/trust.json", members: .transport)
/// configuration.serverTrust = .reloading(reloading, reporter: PinFailureReporter())
/// let session = try TrustHTTPClient(configuration: configuration)
/// let group = ServiceGroup(
///     services: [server, TrustConfigurationReloadService(reloading, pollingEvery: .seconds(10)), TrustHTTPClientService(session)],
///     gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
public struct TrustConfigurationReloadService: Service {
    /// The configuration this service polls.
    public let configuration: ReloadingTrustConfiguration
    /// The time between two looks at the file.
    public let interval: Duration

    /// A service polling `configuration`'s file every `interval`.
    public init(_ configuration: ReloadingTrustConfiguration, pollingEvery interval: Duration = .seconds(5)) {
        self.configuration = configuration
        self.interval = interval
    }

    /// Polls until the group shuts down gracefully or the task is cancelled.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await configuration.run(pollingEvery: interval)
        }
    }
}

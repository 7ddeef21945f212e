import ServiceLifecycle
import TrustHTTP

/// Any of the package's reloaders (``Trust/Reloading``: `ReloadingTrustConfiguration`, `ReloadingClientIdentity`,
/// `ReloadingServerIdentity`) polling its files as a swift-service-lifecycle `Service`: run it in the application's
/// `ServiceGroup`, and it polls every `pollInterval` of the reloader (``Trust/Reloading/run()``) until the group
/// shuts down gracefully or is cancelled. Files that are refused leave the value in force; the refusal goes to the
/// reloader's observers (and, for a trust configuration, a TrustHTTPClient's log, metrics and observer).
///
/// ```swift
/// let reloading = try ReloadingTrustConfiguration(contentsOf: "/etc/app/trust.json", pollInterval: .seconds(10))
/// configuration.serverTrust = reloading
/// configuration.pinFailureReporter = PinFailureReporter()
/// let client = try TrustHTTPClient(configuration: configuration)
/// let group = ServiceGroup(
///     services: [server, ReloadingService(reloading), TrustHTTPClientService(client)],
///     gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
public struct ReloadingService<Reloader: Reloading>: Service {
    /// The reloader this service polls.
    package let reloader: Reloader

    /// A service polling `reloader`'s files every `reloader.pollInterval`.
    public init(_ reloader: Reloader) {
        self.reloader = reloader
    }

    /// Polls until the group shuts down gracefully or the task is cancelled.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await reloader.run()
        }
    }
}

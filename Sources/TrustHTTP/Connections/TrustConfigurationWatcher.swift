import NIOConcurrencyHelpers
import Trust

/// What a ``TrustHTTPClient`` whose server trust is a `ReloadingTrustConfiguration` does when its configuration
/// changes. Every swap and refusal is logged, counted and given to the configuration observer
/// (``SessionTelemetry``). Connections are pooled by the generation of the configuration their route was made
/// under (``SessionRouter/Route/key``), so no request that starts after a swap is sent on a connection made
/// before it: its decision, TLS minimum and client identity are those of the new configuration. After a swap
/// the client identities the configuration names are loaded again, and the connections made before it, which
/// no new request can use, are closed — at once when idle, after the requests in flight on them end otherwise.
/// A connection whose handshake straddled the swap is closed likewise once it is made (``created(_:since:)``).
final class TrustConfigurationWatcher: Sendable {
    private let reloading: ReloadingTrustConfiguration
    private let pool: ConnectionPool
    private let router: SessionRouter
    private let telemetry: SessionTelemetry
    private let observation = NIOLockedValueBox<ReloadObservation?>(nil)
    /// Swaps handled, and connections made before one and closed for it (for diagnostics and tests).
    private let counts = NIOLockedValueBox((passes: 0, distrusted: 0))

    init(_ reloading: ReloadingTrustConfiguration, pool: ConnectionPool, router: SessionRouter, telemetry: SessionTelemetry) {
        self.reloading = reloading
        self.pool = pool
        self.router = router
        self.telemetry = telemetry
        let observation = reloading.observe { [weak self] event in self?.changed(event) }
        self.observation.withLockedValue { $0 = observation }
        // A swap between the session's first load of the identities and this observation: load them again.
        let generation = reloading.generation
        if router.identitiesGeneration < generation { loadIdentities(generation: generation, evaluator: reloading.current) }
    }

    deinit { stop() }

    /// The generation in force (read before a connection is made, for ``created(_:since:)``).
    var generation: UInt64 { reloading.generation }

    /// Swaps handled, and connections closed because a swap came after they were made.
    var checked: (passes: Int, distrusted: Int) { counts.withLockedValue { $0 } }

    /// Stops watching (the session shuts down).
    func stop() {
        if let observation = observation.withLockedValue({ $0.take() }) { reloading.removeObserver(observation) }
    }

    /// A connection made while `generation` was in force (leased to the request that made it): closed once that
    /// request ends if another has been put in force since (pooled under the earlier generation, no new request
    /// would use it).
    func created(_ connection: Connection, since generation: UInt64) {
        guard reloading.generation != generation else { return }
        retire([connection])
    }

    private func changed(_ event: ReloadingTrustConfiguration.Event) {
        telemetry.trustConfigurationChanged(event)
        guard case .reloaded(let generation, _) = event else { return }
        // Observers are called while the swap holds the configuration's lock: `current` is `generation`'s
        // unless an observer offered another, whose own event has then been handled first.
        if reloading.generation == generation { loadIdentities(generation: generation, evaluator: reloading.current) }
        retire(pool.openConnections)
        counts.withLockedValue { $0.passes += 1 }
    }

    private func loadIdentities(generation: UInt64, evaluator: ConfiguredTrustEvaluator) {
        guard let error = router.configurationSwapped(to: generation, evaluator: evaluator) else { return }
        telemetry.logger?.warning(
            "a client identity in the trust configuration could not be loaded; the identities loaded before stay",
            metadata: ["trust.generation": "\(generation)", "error": "\(error)"])
    }

    /// The pool lends `connections` no more: closed now when idle, after the requests in flight on them otherwise.
    private func retire(_ connections: [Connection]) {
        for connection in connections { pool.distrust(connection) }
        counts.withLockedValue { $0.distrusted += connections.count }
    }
}

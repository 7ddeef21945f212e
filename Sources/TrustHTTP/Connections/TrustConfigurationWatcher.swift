import NIOConcurrencyHelpers
import Trust

/// What a ``Session`` with ``ServerTrustConfiguration/reloading(_:reporter:)`` does when its configuration
/// changes. Every swap and refusal is logged, counted and given to the configuration observer
/// (``SessionTelemetry``). After a swap the routes are made again (a host's entry, TLS minimum), and every pooled
/// connection is checked again under the new configuration: one whose decision no longer holds lends nothing
/// more — closed at once when idle, after the requests in flight on it end otherwise. A connection whose
/// handshake straddled the swap is checked once it is made (``created(_:since:)``).
final class TrustConfigurationWatcher: Sendable {
    private let reloading: ReloadingTrustConfiguration
    private let pool: ConnectionPool
    private let router: SessionRouter
    private let telemetry: SessionTelemetry
    private let observation = NIOLockedValueBox<ReloadingTrustConfiguration.Observation?>(nil)
    /// Checks of the pool after a swap finished, and connections found no longer trusted (for diagnostics and tests).
    private let counts = NIOLockedValueBox((passes: 0, distrusted: 0))

    init(_ reloading: ReloadingTrustConfiguration, pool: ConnectionPool, router: SessionRouter, telemetry: SessionTelemetry) {
        self.reloading = reloading
        self.pool = pool
        self.router = router
        self.telemetry = telemetry
        let observation = reloading.observe { [weak self] event in self?.changed(event) }
        self.observation.withLockedValue { $0 = observation }
    }

    deinit { stop() }

    /// The generation in force (read before a connection is made, for ``created(_:since:)``).
    var generation: UInt64 { reloading.generation }

    /// Checks of the pool finished after swaps, and connections they (or ``created(_:since:)``) found no longer trusted.
    var checked: (passes: Int, distrusted: Int) { counts.withLockedValue { $0 } }

    /// Stops watching (the session shuts down).
    func stop() {
        if let observation = observation.withLockedValue({ $0.take() }) { reloading.stopObserving(observation) }
    }

    /// A connection made while `generation` was in force: checked again if another has been put in force since.
    func created(_ connection: Connection, since generation: UInt64) {
        guard reloading.generation != generation else { return }
        Task { await self.check(connection) }
    }

    private func changed(_ event: ReloadingTrustConfiguration.Event) {
        telemetry.trustConfigurationChanged(event)
        guard case .swapped = event else { return }
        router.forgetRoutes()
        let connections = pool.openConnections
        Task {
            for connection in connections { await self.check(connection) }
            self.counts.withLockedValue { $0.passes += 1 }
        }
    }

    /// Whether the decision `connection` was made with holds under the configuration in force; when it does
    /// not, the pool lends the connection no more. Decisions a challenge handler made (an override) are the
    /// handler's, not the configuration's: they stay.
    func check(_ connection: Connection) async {
        guard let decision = connection.serverTrust, decision.isTrusted, decision.override == nil else { return }
        let trust = ServerTrust(presentedChain: decision.presentedChain, peerName: decision.peerName)
        guard await !reloading.evaluation(for: trust).decision.isTrusted else { return }
        pool.distrust(connection)
        counts.withLockedValue { $0.distrusted += 1 }
    }
}

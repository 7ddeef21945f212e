import Foundation
import NIOCore

/// Keeps idle HTTP/1.1 connections and shared HTTP/2 connections per ``PoolKey`` (origin + trust
/// configuration), so a connection is never reused across origins or trust configurations.
actor ConnectionPool {
    private var idle: [PoolKey: [(connection: Connection, since: ContinuousClock.Instant)]] = [:]
    private var http2: [PoolKey: Connection] = [:]
    private var open: [ObjectIdentifier: Connection] = [:]
    private let idleTimeout: Duration
    private let maximumIdlePerKey: Int
    private var isShutDown = false

    init(idleTimeout: Duration, maximumIdlePerKey: Int) {
        self.idleTimeout = idleTimeout
        self.maximumIdlePerKey = maximumIdlePerKey
    }

    /// A live pooled connection for `key`, if there is one.
    func take(_ key: PoolKey) -> Connection? {
        if let shared = http2[key] {
            if shared.isActive { return shared }
            http2[key] = nil
        }
        while var list = idle[key], let (connection, since) = list.popLast() {
            idle[key] = list.isEmpty ? nil : list
            if connection.isActive && since.duration(to: .now) < idleTimeout { return connection }
            close(connection)
        }
        return nil
    }

    /// Tracks a new connection (and shares it, for HTTP/2).
    func register(_ connection: Connection, key: PoolKey) {
        if isShutDown {
            connection.close()
            return
        }
        open[ObjectIdentifier(connection)] = connection
        if connection.isHTTP2 && connection.shareable { http2[key] = connection }
        connection.channel.closeFuture.whenComplete { _ in
            Task { await self.forget(connection, key: key) }
        }
    }

    /// Returns an HTTP/1.1 connection after a complete response.
    func release(_ connection: Connection, key: PoolKey, reusable: Bool) {
        guard !connection.isHTTP2 else { return }
        var list = idle[key] ?? []
        guard reusable, connection.shareable, connection.isActive, !isShutDown, list.count < maximumIdlePerKey else {
            close(connection)
            return
        }
        let since = ContinuousClock.now
        list.append((connection, since))
        idle[key] = list
        let timeout = idleTimeout
        connection.channel.eventLoop.scheduleTask(in: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)) {
            Task { await self.expire(connection, key: key, since: since) }
        }
    }

    private func expire(_ connection: Connection, key: PoolKey, since: ContinuousClock.Instant) {
        guard let list = idle[key], list.contains(where: { $0.connection === connection && $0.since == since }) else { return }
        idle[key] = list.filter { $0.connection !== connection }
        close(connection)
    }

    private func forget(_ connection: Connection, key: PoolKey) {
        open[ObjectIdentifier(connection)] = nil
        if http2[key] === connection { http2[key] = nil }
        if let list = idle[key] { idle[key] = list.filter { $0.connection !== connection } }
    }

    private func close(_ connection: Connection) {
        open[ObjectIdentifier(connection)] = nil
        connection.close()
    }

    /// Counts, for tests and diagnostics.
    var openConnectionCount: Int { open.count }

    func shutdown() async {
        isShutDown = true
        let all = Array(open.values)
        open = [:]
        idle = [:]
        http2 = [:]
        for connection in all {
            try? await connection.channel.close()
        }
    }
}

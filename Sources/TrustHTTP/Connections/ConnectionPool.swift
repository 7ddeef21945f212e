import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// Keeps idle HTTP/1.1 connections and shared HTTP/2 connections per ``PoolKey`` (origin + trust
/// configuration), so a connection is never reused across origins or trust configurations.
///
/// Lock-based rather than an actor: taking and returning a connection happen on every request,
/// and releasing happens on the connection's event loop the moment a response ends.
final class ConnectionPool: Sendable {
    private struct State {
        var idle: [PoolKey: [(connection: Connection, since: NIODeadline)]] = [:]
        var http2: [PoolKey: Connection] = [:]
        var open: [ObjectIdentifier: Connection] = [:]
        var isShutDown = false
        /// One repeating sweep closes connections idle past the timeout (not one timer per release,
        /// which would grow the event loop's timer heap with every request).
        var sweeper: RepeatedTask?
        /// Keys whose first connection is being made and may turn out HTTP/2, with the requests waiting to
        /// share it (see ``joinConnecting(_:deadline:on:)``).
        var connecting: [PoolKey: [Int: CheckedContinuation<Void, Never>]] = [:]
        /// Keys whose last new connection negotiated HTTP/1.1: their requests do not wait for one another.
        var http1Only: Set<PoolKey> = []
        var nextWaiter = 0
    }

    /// What a request without a pooled connection does (``joinConnecting(_:deadline:on:)``).
    enum Joining {
        /// Make the connection, then call ``finishedConnecting(_:http2:)``.
        case lead
        /// Another request's connection has been made (or failed, or this task was cancelled, or its deadline
        /// passed): look in the pool again, and connect if it holds nothing.
        case waited
        /// Connect without waiting: the origin speaks HTTP/1.1, whose connections are not shared.
        case connectAlone
    }

    private let state = NIOLockedValueBox(State())
    private let idleTimeout: TimeAmount
    private let maximumIdlePerKey: Int

    init(idleTimeout: Duration, maximumIdlePerKey: Int) {
        self.idleTimeout = .nanoseconds(idleTimeout.nanoseconds)
        self.maximumIdlePerKey = maximumIdlePerKey
    }

    /// A live pooled connection for `key`, if there is one.
    func take(_ key: PoolKey) -> Connection? {
        var stale: [Connection] = []
        defer { stale.forEach { $0.close() } }
        return state.withLockedValue { state in
            if let shared = state.http2[key] {
                if shared.isActive { return shared }
                state.http2[key] = nil
            }
            while var list = state.idle[key], let (connection, since) = list.popLast() {
                state.idle[key] = list.isEmpty ? nil : list
                if connection.isActive && NIODeadline.now() - since < idleTimeout { return connection }
                state.open[ObjectIdentifier(connection)] = nil
                stale.append(connection)
            }
            return nil
        }
    }

    /// For a request that found no pooled connection and may use HTTP/2: the first such request for a key
    /// leads, making the connection; those that come while it is being made wait for it and share it when it
    /// is HTTP/2, as URLSession and AsyncHTTPClient do — one TLS handshake for a burst of requests, rather
    /// than one each and all but one connection left unused. Once a key's connection turns out HTTP/1.1,
    /// its requests connect at once.
    ///
    /// A waiting request stops waiting at `deadline` (its own request deadline), on a timer on `eventLoop`,
    /// whatever the leader's connect still takes: it then finds its time is up and fails as timed out.
    func joinConnecting(_ key: PoolKey, deadline: NIODeadline, on eventLoop: any EventLoop) async -> Joining {
        enum Entry {
            case joining(Joining)
            case waiting(id: Int)
        }
        let entry = state.withLockedValue { state -> Entry in
            if state.http1Only.contains(key) || state.isShutDown { return .joining(.connectAlone) }
            if state.connecting[key] == nil {
                state.connecting[key] = [:]
                return .joining(.lead)
            }
            state.nextWaiter += 1
            return .waiting(id: state.nextWaiter)
        }
        let id: Int
        switch entry {
        case .joining(let joining): return joining
        case .waiting(let waiter): id = waiter
        }
        let stopWaiting: @Sendable () -> Void = { [state] in
            state.withLockedValue { $0.connecting[key]?.removeValue(forKey: id) }?.resume()
        }
        let timer = eventLoop.scheduleTask(deadline: deadline, stopWaiting)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waits = state.withLockedValue { state -> Bool in
                    // Checked under the lock the timer takes too: a timer that fired before this has passed the deadline.
                    guard state.connecting[key] != nil, !Task.isCancelled, NIODeadline.now() < deadline else { return false }
                    state.connecting[key]?[id] = continuation
                    return true
                }
                if !waits { continuation.resume() }
            }
        } onCancel: {
            stopWaiting()
        }
        timer.cancel()
        return .waited
    }

    /// The leader's connection is made (registered when it is HTTP/2), or failed (`http2` nil): the waiting
    /// requests look in the pool again.
    func finishedConnecting(_ key: PoolKey, http2: Bool?) {
        let waiting = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            if http2 == false { state.http1Only.insert(key) } else if http2 == true { state.http1Only.remove(key) }
            return Array((state.connecting.removeValue(forKey: key) ?? [:]).values)
        }
        waiting.forEach { $0.resume() }
    }

    /// Tracks a new connection (and shares it, for HTTP/2).
    func register(_ connection: Connection, key: PoolKey) {
        let accepted = state.withLockedValue { state -> Bool in
            guard !state.isShutDown else { return false }
            state.open[ObjectIdentifier(connection)] = connection
            if connection.isHTTP2 && connection.shareable { state.http2[key] = connection }
            return true
        }
        guard accepted else {
            connection.close()
            return
        }
        connection.channel.closeFuture.whenComplete { _ in self.forget(connection, key: key) }
    }

    /// Returns an HTTP/1.1 connection after a complete response; closes it when it cannot be reused.
    func release(_ connection: Connection, key: PoolKey, reusable: Bool) {
        guard !connection.isHTTP2 else { return }
        let since = NIODeadline.now()
        let kept = state.withLockedValue { state -> Bool in
            var list = state.idle[key] ?? []
            guard reusable, connection.shareable, connection.isActive, !state.isShutDown, list.count < maximumIdlePerKey else {
                state.open[ObjectIdentifier(connection)] = nil
                return false
            }
            list.append((connection, since))
            state.idle[key] = list
            return true
        }
        guard kept else {
            connection.close()
            return
        }
        startSweeperIfNeeded(on: connection.channel.eventLoop)
    }

    private func startSweeperIfNeeded(on eventLoop: any EventLoop) {
        let needed = state.withLockedValue { $0.sweeper == nil && !$0.isShutDown }
        guard needed else { return }
        let interval = TimeAmount.nanoseconds(max(idleTimeout.nanoseconds / 2, 1_000_000))
        let task = eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in self.sweep() }
        let duplicate = state.withLockedValue { state -> Bool in
            if state.sweeper != nil || state.isShutDown { return true }
            state.sweeper = task
            return false
        }
        if duplicate { task.cancel() }
    }

    /// Closes idle connections older than the idle timeout.
    private func sweep() {
        let now = NIODeadline.now()
        let expired = state.withLockedValue { state -> [Connection] in
            var expired: [Connection] = []
            for (key, list) in state.idle {
                let (old, fresh) = (list.filter { now - $0.since >= idleTimeout }, list.filter { now - $0.since < idleTimeout })
                guard !old.isEmpty else { continue }
                state.idle[key] = fresh.isEmpty ? nil : fresh
                for entry in old {
                    state.open[ObjectIdentifier(entry.connection)] = nil
                    expired.append(entry.connection)
                }
            }
            return expired
        }
        expired.forEach { $0.close() }
    }

    /// No longer lends `connection` (an HTTP/2 connection a request failed on: going away, or gone), though it
    /// stays open for the streams it still carries.
    func retire(_ connection: Connection, key: PoolKey) {
        state.withLockedValue { state in
            if state.http2[key] === connection { state.http2[key] = nil }
        }
    }

    private func forget(_ connection: Connection, key: PoolKey) {
        state.withLockedValue { state in
            state.open[ObjectIdentifier(connection)] = nil
            if state.http2[key] === connection { state.http2[key] = nil }
            if let list = state.idle[key] { state.idle[key] = list.filter { $0.connection !== connection } }
        }
    }

    /// Connections open now (for tests and diagnostics).
    var openConnectionCount: Int { state.withLockedValue { $0.open.count } }

    func shutdown() async {
        var waiting: [CheckedContinuation<Void, Never>] = []
        let all = state.withLockedValue { state -> [Connection] in
            state.isShutDown = true
            state.sweeper?.cancel()
            state.sweeper = nil
            defer {
                state.open = [:]
                state.idle = [:]
                state.http2 = [:]
            }
            waiting = state.connecting.values.flatMap(\.values)
            state.connecting = [:]
            return Array(state.open.values)
        }
        waiting.forEach { $0.resume() }
        for connection in all {
            try? await connection.channel.close()
        }
    }
}

extension Duration {
    /// Whole nanoseconds (saturating), for NIO's `TimeAmount`.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? Int64.max : scaled &+ attoseconds / 1_000_000_000
    }
}

import NIOConcurrencyHelpers
import NIOCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Keeps connections per ``PoolKey`` (origin + trust configuration), so a connection is never reused across
/// origins or trust configurations: the driver of ``ConnectionPoolStateMachine``, which makes every decision
/// (the per-key limit, the queue, HTTP/2 streams, idle and retired connections). The driver holds the machine
/// under a lock, feeds it events and carries out its actions: it resumes waiting requests, runs the idle sweep
/// and a waiting request's deadline on event loops, closes channels.
///
/// Lock-based rather than an actor: taking and returning a connection happen on every request, and releasing
/// happens on the connection's event loop the moment a response ends.
final class ConnectionPool: Sendable {
    typealias Machine = ConnectionPoolStateMachine
    typealias ConnectionID = ConnectionPoolStateMachine.ConnectionID

    /// What a request gets from the pool.
    enum Lease: Sendable {
        /// A pooled connection (an idle HTTP/1.1 connection, or a stream on a shared HTTP/2 one).
        case pooled(Connection)
        /// The request makes this new connection, then reports ``created(_:_:)`` or ``failed(_:)``.
        case connect(ConnectionID)
    }

    private typealias Outcome = Result<Lease, Machine.Failure>

    private enum Waiter {
        case waiting(CheckedContinuation<Outcome, Never>)
        /// Served before it began to wait.
        case served(Outcome)
    }

    private struct State {
        var machine: Machine
        /// Connections made and not closed (retired HTTP/2 connections included), by ID and by object.
        var connections: [ConnectionID: Connection] = [:]
        var ids: [ObjectIdentifier: ConnectionID] = [:]
        var waiters: [Machine.RequestID: Waiter] = [:]
        var nextRequest = 0
        var sweeper: RepeatedTask?
    }

    /// What carrying out actions leaves to do once the lock is released.
    private struct Effects {
        var resumptions: [(CheckedContinuation<Outcome, Never>, Outcome)] = []
        var closing: [Connection] = []

        func run() {
            for (continuation, outcome) in resumptions { continuation.resume(returning: outcome) }
            for connection in closing { connection.close() }
        }
    }

    private let state: NIOLockedValueBox<State>
    private let group: any EventLoopGroup

    init(configuration: Machine.Configuration, group: any EventLoopGroup) {
        self.state = NIOLockedValueBox(State(machine: Machine(configuration: configuration)))
        self.group = group
    }

    /// Connections open now (for tests and diagnostics).
    var openConnectionCount: Int { state.withLockedValue { $0.connections.count } }

    // MARK: Requests

    /// A pooled connection for a request to `key`, the right to make a new one, or — when the key is at its
    /// limit — a wait in the key's queue until one of those, the request's `deadline` (a timer on an event
    /// loop) or its cancellation.
    func connection(for key: PoolKey, mayUseHTTP2: Bool, deadline: NIODeadline) async throws(Machine.Failure) -> Lease {
        let (admitted, effects) = state.withLockedValue { state in admit(key, mayUseHTTP2: mayUseHTTP2, &state) }
        effects.run()
        switch admitted {
        case .now(let lease): return lease
        case .wait(let request): return try await wait(request, deadline: deadline).get()
        case .failed(let failure): throw failure
        }
    }

    /// The right to make a new connection for `key` at once (see ``ConnectionPoolStateMachine/newConnectionRequested(key:)``).
    func newConnection(for key: PoolKey) throws(Machine.Failure) -> ConnectionID {
        let admission = state.withLockedValue { $0.machine.newConnectionRequested(key: key) }
        guard case .connect(let connection) = admission else { throw .shutDown }
        return connection
    }

    private enum Admitted {
        case now(Lease)
        case wait(Machine.RequestID)
        case failed(Machine.Failure)
    }

    /// The admission of a new request, under the lock.
    private func admit(_ key: PoolKey, mayUseHTTP2: Bool, _ state: inout State) -> (Admitted, Effects) {
        state.nextRequest += 1
        let request = Machine.RequestID(state.nextRequest)
        var effects = Effects()
        while true {
            switch state.machine.requestArrived(request, key: key, mayUseHTTP2: mayUseHTTP2) {
            case .lease(let id):
                if let connection = state.connections[id], connection.isActive { return (.now(.pooled(connection)), effects) }
                // Closed while idle, its close not yet seen: forget it, and ask again.
                if let connection = state.connections.removeValue(forKey: id) { state.ids[ObjectIdentifier(connection)] = nil }
                apply(state.machine.connectionClosed(id), &state, into: &effects)
            case .connect(let id): return (.now(.connect(id)), effects)
            case .wait: return (.wait(request), effects)
            case .fail(let failure): return (.failed(failure), effects)
            }
        }
    }

    /// Waits for the machine's answer to `request`, until `deadline` or the task's cancellation.
    private func wait(_ id: Machine.RequestID, deadline: NIODeadline) async -> Outcome {
        let timer = group.next().scheduleTask(deadline: deadline) { self.execute { $0.requestDeadlinePassed(id) } }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let served = state.withLockedValue { state -> Outcome? in
                    if case .served(let outcome) = state.waiters.removeValue(forKey: id) { return outcome }
                    state.waiters[id] = .waiting(continuation)
                    return nil
                }
                if let served { continuation.resume(returning: served) }
            }
        } onCancel: {
            execute { $0.requestCancelled(id) }
        }
    }

    // MARK: Connections

    /// The connection `id` is made: tracked, shared when it can be, watched for its closing and (HTTP/2) for
    /// its peer's SETTINGS and GOAWAY.
    func created(_ id: ConnectionID, _ connection: Connection) {
        let negotiated: Machine.Negotiated = connection.isHTTP2 ? .http2(maximumStreams: nil) : .http1
        update { state in
            state.connections[id] = connection
            state.ids[ObjectIdentifier(connection)] = id
            return state.machine.connectionCreated(id, negotiated, shareable: connection.shareable)
        }
        let channel = connection.channel
        channel.closeFuture.whenComplete { _ in self.closed(id) }
        guard connection.isHTTP2 else { return }
        channel.eventLoop.execute {
            guard let observer = try? channel.pipeline.syncOperations.handler(type: HTTP2ConnectionObserver.self) else { return }
            observer.observe(
                settings: { maximum in self.execute { $0.settingsChanged(on: id, maximumStreams: maximum) } },
                goingAway: { self.execute { $0.connectionRetired(id) } })
        }
    }

    /// The connection `id` could not be made.
    func failed(_ id: ConnectionID) {
        execute { $0.connectionFailed(id) }
    }

    /// A request's response on `connection` ended (or its exchange failed): an HTTP/1.1 connection goes to the
    /// next waiting request, back to the pool, or is closed when it cannot be reused; an HTTP/2 stream is freed.
    func release(_ connection: Connection, reusable: Bool) {
        let now = NIODeadline.now()
        update { state in
            guard let id = state.ids[ObjectIdentifier(connection)] else { return [] }
            return state.machine.requestFinished(on: id, reusable: reusable && connection.isActive, at: now)
        }
    }

    /// No longer lends `connection` (an HTTP/2 connection a request failed on: going away, or gone); it stays
    /// open, and counted, for the streams it still carries, and is closed with the last of them.
    func retire(_ connection: Connection) {
        update { state in
            guard let id = state.ids[ObjectIdentifier(connection)] else { return [] }
            return state.machine.connectionRetired(id)
        }
    }

    /// The connections open now (leased, idle, retired).
    var openConnections: [Connection] { state.withLockedValue { Array($0.connections.values) } }

    /// No longer lends `connection` (its trust decision no longer holds): closed now when idle, else when the
    /// requests in flight on it end (see ``ConnectionPoolStateMachine/connectionDistrusted(_:)``).
    func distrust(_ connection: Connection) {
        update { state in
            guard let id = state.ids[ObjectIdentifier(connection)] else { return [] }
            return state.machine.connectionDistrusted(id)
        }
    }

    private func closed(_ id: ConnectionID) {
        update { state in
            if let connection = state.connections.removeValue(forKey: id) { state.ids[ObjectIdentifier(connection)] = nil }
            return state.machine.connectionClosed(id)
        }
    }

    /// Closes every connection; waiting requests fail.
    func shutdown() async {
        let (effects, rest) = state.withLockedValue { state -> (Effects, [Connection]) in
            var effects = Effects()
            apply(state.machine.shutdown(), &state, into: &effects)
            defer {
                state.connections = [:]
                state.ids = [:]
            }
            return (effects, Array(state.connections.values))
        }
        for (continuation, outcome) in effects.resumptions { continuation.resume(returning: outcome) }
        for connection in effects.closing + rest {
            try? await connection.channel.close()
        }
    }

    // MARK: Carrying out actions

    /// Feeds one event to the machine under the lock, then carries out what it asks outside it.
    private func update(_ event: (inout State) -> [Machine.Action]) {
        let effects = state.withLockedValue { state in
            var effects = Effects()
            apply(event(&state), &state, into: &effects)
            return effects
        }
        effects.run()
    }

    private func execute(_ event: (inout Machine) -> [Machine.Action]) {
        update { state in event(&state.machine) }
    }

    private func apply(_ actions: [Machine.Action], _ state: inout State, into effects: inout Effects) {
        for action in actions {
            switch action {
            case .lease(let id, let request):
                serve(request, state.connections[id].map { .success(.pooled($0)) } ?? .failure(.shutDown), &state, into: &effects)
            case .connect(let id, let request):
                serve(request, .success(.connect(id)), &state, into: &effects)
            case .fail(let request, let failure):
                serve(request, .failure(failure), &state, into: &effects)
            case .close(let id):
                // Forgotten at once (it no longer counts as open); its channel's closing is then a no-op to the machine.
                guard let connection = state.connections.removeValue(forKey: id) else { continue }
                state.ids[ObjectIdentifier(connection)] = nil
                effects.closing.append(connection)
            case .scheduleIdleTimer:
                state.sweeper?.cancel()
                state.sweeper = scheduleSweeper(state.machine.configuration.idleTimeout)
            case .cancelIdleTimer:
                state.sweeper?.cancel()
                state.sweeper = nil
            }
        }
    }

    private func serve(_ request: Machine.RequestID, _ outcome: Outcome, _ state: inout State, into effects: inout Effects) {
        if case .waiting(let continuation) = state.waiters.removeValue(forKey: request) {
            effects.resumptions.append((continuation, outcome))
        } else {
            state.waiters[request] = .served(outcome)
        }
    }

    /// One repeating sweep closes connections idle past the timeout (not one timer per release, which would
    /// grow the event loop's timer heap with every request).
    private func scheduleSweeper(_ idleTimeout: TimeAmount) -> RepeatedTask {
        let interval = TimeAmount.nanoseconds(max(idleTimeout.nanoseconds / 2, 1_000_000))
        return group.next().scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            self.execute { $0.idleTimerFired(at: .now()) }
        }
    }
}

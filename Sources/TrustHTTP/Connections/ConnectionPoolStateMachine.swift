import NIOCore

/// The connection pool's decisions, as a value: events in, actions out. No channels, no locks, no clocks —
/// connections and requests are opaque IDs, and the time comes in with the events that need it — so every
/// transition can be driven by a test without a socket. `ConnectionPool` is its driver: it holds it under a
/// lock and carries out its actions (continuations, the idle timer, closing channels).
///
/// Per ``PoolKey`` (origin + trust configuration):
/// - at most ``Configuration/maximumConnectionsPerKey`` connections, open or being made (URLSession's
///   `httpMaximumConnectionsPerHost`); the requests beyond wait in a FIFO queue, each until it is served, its
///   deadline passes or it is cancelled;
/// - an HTTP/2 connection carries up to the peer's SETTINGS_MAX_CONCURRENT_STREAMS (RFC 9113 §6.5.2; 100 assumed
///   until its SETTINGS arrive, as the RFC recommends no less); a second connection is made only when every one is
///   full and its limit known;
/// - while a connection that may turn out HTTP/2 is being made, further requests wait for it (one TLS handshake for
///   a burst) — unless the key's last connection spoke HTTP/1.1, or the last attempt failed;
/// - at most ``Configuration/maximumIdlePerKey`` idle HTTP/1.1 connections, closed after
///   ``Configuration/idleTimeout`` by a periodic sweep (one timer, not one per response);
/// - a retired HTTP/2 connection (going away) lends no more streams; it counts until it closes, which the machine
///   asks for when its last stream ends.
///
/// A request that must have a new connection (its own handshake handler, or a retry after its connection
/// failed before any response) is not held back by the limit: ``newConnectionRequested(key:)``.
struct ConnectionPoolStateMachine: Sendable {
    /// A connection's identity (given out by the machine when it lets a request make one).
    struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
        let value: Int
        var description: String { "connection \(value)" }
    }

    /// A request's identity (given by the driver).
    struct RequestID: Hashable, Sendable, CustomStringConvertible {
        let value: Int
        init(_ value: Int) { self.value = value }
        var description: String { "request \(value)" }
    }

    struct Configuration: Sendable {
        /// Connections per key, open or being made (at least 1).
        var maximumConnectionsPerKey: Int
        /// Idle HTTP/1.1 connections kept per key.
        var maximumIdlePerKey: Int
        /// How long an idle connection is kept.
        var idleTimeout: TimeAmount
    }

    /// Why a waiting request gets no connection.
    enum Failure: Error, Hashable, Sendable {
        /// Its deadline passed while it waited.
        case timedOut
        /// It was cancelled while it waited.
        case cancelled
        /// The pool was shut down.
        case shutDown
    }

    /// What a request gets when it arrives.
    enum Admission: Hashable, Sendable {
        /// A pooled connection (an idle HTTP/1.1 one, or a stream on an HTTP/2 one).
        case lease(ConnectionID)
        /// It makes this new connection, then reports ``connectionCreated(_:_:shareable:)`` or ``connectionFailed(_:)``.
        case connect(ConnectionID)
        /// It waits for an ``Action``.
        case wait
        case fail(Failure)
    }

    /// What the driver does after an event.
    enum Action: Hashable, Sendable {
        /// Hand the connection to the waiting request.
        case lease(ConnectionID, to: RequestID)
        /// The waiting request makes this new connection.
        case connect(ConnectionID, for: RequestID)
        /// The waiting request fails.
        case fail(RequestID, Failure)
        /// Close the connection (it is no longer the pool's).
        case close(ConnectionID)
        /// Start the periodic idle sweep (``idleTimerFired(at:)``).
        case scheduleIdleTimer
        /// Stop it: no idle connection left.
        case cancelIdleTimer
    }

    /// The protocol a new connection negotiated.
    enum Negotiated: Hashable, Sendable {
        case http1
        /// HTTP/2, with the peer's SETTINGS_MAX_CONCURRENT_STREAMS when its SETTINGS have arrived.
        case http2(maximumStreams: Int?)
    }

    /// Streams assumed on an HTTP/2 connection whose SETTINGS have not arrived (RFC 9113 §6.5.2 recommends no
    /// fewer than 100; AsyncHTTPClient assumes the same).
    static let assumedConcurrentStreams = 100

    let configuration: Configuration
    private var keys: [PoolKey: KeyState] = [:]
    private var registry = Registry()
    /// The key each waiting request waits on.
    private var waiting: [RequestID: PoolKey] = [:]
    private(set) var isShutDown = false

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Connections the machine tracks (being made, leased, idle, retired and still open).
    var connectionCount: Int { registry.connections.count }
    /// Requests waiting in a queue.
    var waitingCount: Int { waiting.count }

    // MARK: Requests

    /// A request for `key` that may take a pooled connection; `mayUseHTTP2` when it offers HTTP/2 over ALPN.
    mutating func requestArrived(_ request: RequestID, key: PoolKey, mayUseHTTP2: Bool) -> Admission {
        guard !isShutDown else { return .fail(.shutDown) }
        let waiter = Waiter(id: request, mayUseHTTP2: mayUseHTTP2)
        let configuration = self.configuration
        let admission = withKey(key, creating: true) { $0.admit(waiter, &$1, configuration) } ?? .wait
        if admission == .wait { waiting[request] = key }
        return admission
    }

    /// A request that needs a new connection of its own (see the type's notes).
    mutating func newConnectionRequested(key: PoolKey) -> Admission {
        guard !isShutDown else { return .fail(.shutDown) }
        guard let connection = withKey(key, creating: true, { $0.startConnecting(&$1) }) else { return .fail(.shutDown) }
        return .connect(connection)
    }

    /// A waiting request's deadline passed: it fails as timed out (nothing when it was served already).
    mutating func requestDeadlinePassed(_ request: RequestID) -> [Action] {
        abandon(request, .timedOut)
    }

    /// A waiting request was cancelled: it fails as cancelled (nothing when it was served already).
    mutating func requestCancelled(_ request: RequestID) -> [Action] {
        abandon(request, .cancelled)
    }

    private mutating func abandon(_ request: RequestID, _ failure: Failure) -> [Action] {
        guard let key = waiting.removeValue(forKey: request) else { return [] }
        withKey(key) { state, _ in state.removeWaiter(request) }
        return [.fail(request, failure)]
    }

    // MARK: Connections

    /// The connection a request was let make is ready; the request that made it uses it (an HTTP/2
    /// connection's first stream is that request's).
    mutating func connectionCreated(_ connection: ConnectionID, _ negotiated: Negotiated, shareable: Bool) -> [Action] {
        guard let key = registry.connections[connection]?.key else { return [.close(connection)] }
        guard !isShutDown else {
            registry.connections[connection] = nil
            return [.close(connection)]
        }
        withKey(key) { $0.created(connection, negotiated, shareable: shareable, &$1) }
        return served(key)
    }

    /// The connection could not be made (its request got the error): its place goes to the next waiting request.
    mutating func connectionFailed(_ connection: ConnectionID) -> [Action] {
        guard let record = registry.connections.removeValue(forKey: connection) else { return [] }
        withKey(record.key) { state, _ in state.failed() }
        return served(record.key)
    }

    /// A request's response ended on `connection` (or its exchange failed); `reusable` when an HTTP/1.1
    /// connection may carry another request. `now` dates an HTTP/1.1 connection that goes idle.
    mutating func requestFinished(on connection: ConnectionID, reusable: Bool, at now: NIODeadline) -> [Action] {
        guard let key = registry.connections[connection]?.key else { return [] }
        var actions: [Action] = []
        let (configuration, reusable) = (self.configuration, reusable && !isShutDown)
        withKey(key) { $0.finished(connection, reusable: reusable, at: now, &$1, configuration, into: &actions) }
        served(key, into: &actions)
        return actions
    }

    /// The peer's SETTINGS changed its SETTINGS_MAX_CONCURRENT_STREAMS on an HTTP/2 connection.
    mutating func settingsChanged(on connection: ConnectionID, maximumStreams: Int) -> [Action] {
        guard let key = registry.connections[connection]?.key else { return [] }
        registry.setMaximumStreams(maximumStreams, of: connection)
        return served(key)
    }

    /// The connection closed (the peer, an error, or a ``Action/close(_:)`` carried out).
    mutating func connectionClosed(_ connection: ConnectionID) -> [Action] {
        guard let record = registry.connections.removeValue(forKey: connection) else { return [] }
        withKey(record.key) { state, _ in state.removed(connection) }
        return served(record.key)
    }

    /// An HTTP/2 connection is going away (GOAWAY, or a request failed on it): it lends no more streams; it
    /// stays open, and counted against the limit, for the streams it carries, and closes with the last of them
    /// (at once when it carries none) — so a peer that refuses streams without closing cannot make the pool
    /// open connections without bound.
    mutating func connectionRetired(_ connection: ConnectionID) -> [Action] {
        guard let record = registry.connections[connection], case .http2 = record.state else { return [] }
        var actions: [Action] = []
        withKey(record.key) { $0.retire(connection, &$1, into: &actions) }
        served(record.key, into: &actions)
        return actions
    }

    /// A connection whose trust decision no longer holds (the trust configuration changed): it lends nothing
    /// more; an idle HTTP/1.1 connection closes now, a leased one when its request ends, an HTTP/2 connection with
    /// its last stream (at once when it carries none).
    mutating func connectionDistrusted(_ connection: ConnectionID) -> [Action] {
        guard let record = registry.connections[connection] else { return [] }
        var actions: [Action] = []
        withKey(record.key) { $0.distrust(connection, &$1, into: &actions) }
        served(record.key, into: &actions)
        return actions
    }

    /// The periodic idle sweep: closes idle connections older than the idle timeout; stops the timer when no
    /// idle connection is left.
    mutating func idleTimerFired(at now: NIODeadline) -> [Action] {
        var actions: [Action] = []
        var idleLeft = false
        let configuration = self.configuration
        for key in Array(keys.keys) {
            let hasIdle = withKey(key) { state, registry in
                state.expire(at: now, &registry, configuration, into: &actions)
                return state.hasIdle
            }
            idleLeft = idleLeft || hasIdle == true
        }
        if !idleLeft && registry.idleTimerScheduled {
            registry.idleTimerScheduled = false
            actions.append(.cancelIdleTimer)
        }
        return actions
    }

    /// Every waiting request fails, every open connection closes; connections being made close once made.
    mutating func shutdown() -> [Action] {
        guard !isShutDown else { return [] }
        isShutDown = true
        var actions: [Action] = waiting.keys.sorted { $0.value < $1.value }.map { .fail($0, .shutDown) }
        for (id, record) in registry.connections.sorted(by: { $0.key.value < $1.key.value }) {
            if case .connecting = record.state { continue }
            registry.connections[id] = nil
            actions.append(.close(id))
        }
        if registry.idleTimerScheduled { actions.append(.cancelIdleTimer) }
        registry.idleTimerScheduled = false
        waiting = [:]
        keys = [:]
        return actions
    }

    // MARK: Serving the queue

    private mutating func served(_ key: PoolKey) -> [Action] {
        var actions: [Action] = []
        served(key, into: &actions)
        return actions
    }

    /// Gives the key's waiting requests what is free now, in order; forgets a key with nothing left. Every
    /// request `actions` serves (these and the event's own) stops waiting.
    private mutating func served(_ key: PoolKey, into actions: inout [Action]) {
        let configuration = self.configuration
        withKey(key) { $0.serve(&$1, configuration, into: &actions) }
        for action in actions {
            switch action {
            case .lease(_, let request), .connect(_, let request): waiting[request] = nil
            default: break
            }
        }
    }

    /// Runs `body` on `key`'s state (a new one when `creating`), then puts it back unless nothing is left in it.
    /// Taken out and put back rather than changed through the dictionary's subscript: that accessor's coroutine
    /// frame, too large for a value this size, is allocated on the heap on every call (measured: about 10 more
    /// allocations per keep-alive request).
    @discardableResult
    private mutating func withKey<T>(_ key: PoolKey, creating: Bool = false, _ body: (inout KeyState, inout Registry) -> T) -> T? {
        guard var state = keys.removeValue(forKey: key) ?? (creating ? KeyState(key: key) : nil) else { return nil }
        let result = body(&state, &registry)
        if !state.isUnused { keys[key] = state }
        return result
    }
}

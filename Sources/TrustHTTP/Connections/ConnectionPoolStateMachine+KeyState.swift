import NIOCore

extension ConnectionPoolStateMachine {
    /// A request waiting for a connection.
    struct Waiter: Hashable, Sendable {
        let id: RequestID
        /// It offers HTTP/2: it may share a connection being made.
        let mayUseHTTP2: Bool
    }

    /// A key as its connections' records hold it: one object per key's state, so that a record holds a reference
    /// (8 bytes) rather than its own copy of the key (about 80: an origin, a trust key and a proxy). With a
    /// thousand idle connections that is about 150 bytes less per connection in the registry's table.
    final class SharedKey: Sendable {
        let key: PoolKey

        init(_ key: PoolKey) {
            self.key = key
        }
    }

    /// Every connection the machine tracks, and the idle timer's state.
    struct Registry: Sendable {
        struct Record: Sendable {
            let sharedKey: SharedKey
            var state: State
            var shareable = true

            var key: PoolKey { sharedKey.key }
        }

        enum State: Sendable {
            case connecting
            case http1Leased
            case http1Idle(since: NIODeadline)
            case http2(HTTP2Streams)
        }

        private(set) var nextID = 0
        var connections: [ConnectionID: Record] = [:]
        var idleTimerScheduled = false

        mutating func add(_ key: SharedKey) -> ConnectionID {
            nextID += 1
            let id = ConnectionID(value: nextID)
            connections[id] = Record(sharedKey: key, state: .connecting)
            return id
        }

        mutating func setMaximumStreams(_ maximum: Int, of connection: ConnectionID) {
            guard case .http2(var streams) = connections[connection]?.state else { return }
            streams.maximum = max(maximum, 0)
            streams.known = true
            set(.http2(streams), of: connection)
        }

        // Records are read, changed and written back, not changed through the dictionary's subscript: that
        // accessor's coroutine frame, too large for a record, is allocated on the heap on every call.

        mutating func set(_ state: State, of connection: ConnectionID) {
            guard var record = connections[connection] else { return }
            record.state = state
            connections[connection] = record
        }

        mutating func setShareable(_ shareable: Bool, of connection: ConnectionID) {
            guard var record = connections[connection] else { return }
            record.shareable = shareable
            connections[connection] = record
        }
    }

    /// The streams of an HTTP/2 connection.
    struct HTTP2Streams: Hashable, Sendable {
        var open: Int
        var maximum: Int
        /// The peer's SETTINGS have said `maximum`.
        var known: Bool
        /// Going away: lends nothing more, closes with its last stream.
        var retired = false
        var isFull: Bool { retired || open >= maximum }
    }

    /// What the protocol of a key's last new connection says about the next.
    enum ProtocolHint: Sendable {
        case unknown
        case http1
        case http2
    }

    /// One key's connections and queue.
    struct KeyState: Sendable {
        /// The key, as this key's connection records share it.
        let key: SharedKey
        /// Connections being made and open ones (retired HTTP/2 connections until they close): what the limit bounds.
        private(set) var counted = 0
        private var connecting = 0
        /// Idle HTTP/1.1 connections, most recently used last.
        private var idle: [ConnectionID] = []
        /// Shared HTTP/2 connections.
        private var http2: [ConnectionID] = []
        private var queue = CircularBuffer<Waiter>()
        private var hint = ProtocolHint.unknown
        private var lastConnectFailed = false

        init(key: PoolKey) {
            self.key = SharedKey(key)
        }

        var isUnused: Bool { counted == 0 && queue.isEmpty }
        var hasIdle: Bool { !idle.isEmpty }

        /// A connection for `waiter` now, else it joins the queue (behind any request already waiting: FIFO).
        mutating func admit(_ waiter: Waiter, _ registry: inout Registry, _ configuration: Configuration) -> Admission {
            if queue.isEmpty, let admission = grant(waiter, &registry, configuration) { return admission }
            queue.append(waiter)
            return .wait
        }

        /// Serves the queue's head while something is free for it.
        mutating func serve(_ registry: inout Registry, _ configuration: Configuration, into actions: inout [Action]) {
            while let head = queue.first, let admission = grant(head, &registry, configuration) {
                queue.removeFirst()
                switch admission {
                case .lease(let connection): actions.append(.lease(connection, to: head.id))
                case .connect(let connection): actions.append(.connect(connection, for: head.id))
                case .wait, .fail: break
                }
            }
        }

        mutating func removeWaiter(_ request: RequestID) {
            if let index = queue.firstIndex(where: { $0.id == request }) { queue.remove(at: index) }
        }

        /// A free HTTP/2 stream, an idle HTTP/1.1 connection, or a new connection if one may be made.
        private mutating func grant(_ waiter: Waiter, _ registry: inout Registry, _ configuration: Configuration) -> Admission? {
            for connection in http2 {
                guard case .http2(var streams) = registry.connections[connection]?.state, !streams.isFull else { continue }
                streams.open += 1
                registry.set(.http2(streams), of: connection)
                return .lease(connection)
            }
            if let connection = idle.popLast() {
                registry.set(.http1Leased, of: connection)
                return .lease(connection)
            }
            guard mayConnect(waiter, registry, configuration) else { return nil }
            return .connect(startConnecting(&registry))
        }

        private func mayConnect(_ waiter: Waiter, _ registry: Registry, _ configuration: Configuration) -> Bool {
            guard counted < configuration.maximumConnectionsPerKey else { return false }
            // A connection being made may turn out HTTP/2 and carry this request too: wait for it, unless the
            // key's last connection spoke HTTP/1.1 or the last attempt failed (each request then tries its own).
            if waiter.mayUseHTTP2 && connecting > 0 && hint != .http1 && !lastConnectFailed { return false }
            // An HTTP/2 connection whose SETTINGS have not arrived may allow more streams than assumed.
            return !http2.contains { connection in
                guard case .http2(let streams) = registry.connections[connection]?.state else { return false }
                return !streams.known
            }
        }

        mutating func startConnecting(_ registry: inout Registry) -> ConnectionID {
            counted += 1
            connecting += 1
            return registry.add(key)
        }

        mutating func created(_ connection: ConnectionID, _ negotiated: Negotiated, shareable: Bool, _ registry: inout Registry) {
            connecting -= 1
            lastConnectFailed = false
            registry.setShareable(shareable, of: connection)
            switch negotiated {
            case .http1:
                hint = .http1
                registry.set(.http1Leased, of: connection)
            case .http2(let maximum):
                hint = .http2
                let streams = HTTP2Streams(open: 1, maximum: maximum ?? assumedConcurrentStreams, known: maximum != nil)
                registry.set(.http2(streams), of: connection)
                if shareable { http2.append(connection) }
            }
        }

        mutating func failed() {
            connecting -= 1
            counted -= 1
            lastConnectFailed = true
        }

        /// A connection no longer tracked (closed, retired); its record is already gone.
        mutating func removed(_ connection: ConnectionID) {
            counted -= 1
            idle.removeAll { $0 == connection }
            http2.removeAll { $0 == connection }
        }

        /// A request finished on `connection`: an HTTP/1.1 connection goes to the next waiting request, or
        /// idle, or is closed; an HTTP/2 connection frees a stream (one of its own closes with its last).
        mutating func finished(
            _ connection: ConnectionID, reusable: Bool, at now: NIODeadline, _ registry: inout Registry, _ configuration: Configuration,
            into actions: inout [Action]
        ) {
            guard let record = registry.connections[connection] else { return }
            switch record.state {
            case .http1Leased:
                guard reusable, record.shareable else { return close(connection, &registry, into: &actions) }
                if let next = queue.popFirst() {
                    actions.append(.lease(connection, to: next.id))
                } else if idle.count < configuration.maximumIdlePerKey {
                    registry.set(.http1Idle(since: now), of: connection)
                    idle.append(connection)
                    if !registry.idleTimerScheduled {
                        registry.idleTimerScheduled = true
                        actions.append(.scheduleIdleTimer)
                    }
                } else {
                    close(connection, &registry, into: &actions)
                }
            case .http2(var streams):
                streams.open = max(streams.open - 1, 0)
                registry.set(.http2(streams), of: connection)
                if (!record.shareable || streams.retired) && streams.open == 0 { close(connection, &registry, into: &actions) }
            case .connecting, .http1Idle:
                break
            }
        }

        /// An HTTP/2 connection going away lends no more streams; it closes now when it carries none, else with
        /// its last (``finished(_:reusable:at:_:_:into:)``). It counts until then.
        mutating func retire(_ connection: ConnectionID, _ registry: inout Registry, into actions: inout [Action]) {
            guard case .http2(var streams) = registry.connections[connection]?.state, !streams.retired else { return }
            http2.removeAll { $0 == connection }
            guard streams.open > 0 else { return close(connection, &registry, into: &actions) }
            streams.retired = true
            registry.set(.http2(streams), of: connection)
        }

        /// A connection that must lend nothing more: closed now when idle, else when its requests end (a leased
        /// HTTP/1.1 connection is no longer shareable, so ``finished(_:reusable:at:_:_:into:)`` closes it).
        mutating func distrust(_ connection: ConnectionID, _ registry: inout Registry, into actions: inout [Action]) {
            switch registry.connections[connection]?.state {
            case .http1Idle: close(connection, &registry, into: &actions)
            case .http1Leased: registry.setShareable(false, of: connection)
            case .http2: retire(connection, &registry, into: &actions)
            case .connecting, nil: break
            }
        }

        /// Closes the idle connections older than the idle timeout.
        mutating func expire(at now: NIODeadline, _ registry: inout Registry, _ configuration: Configuration, into actions: inout [Action]) {
            let expired = idle.filter { connection in
                guard case .http1Idle(let since) = registry.connections[connection]?.state else { return false }
                return now - since >= configuration.idleTimeout
            }
            for connection in expired { close(connection, &registry, into: &actions) }
        }

        private mutating func close(_ connection: ConnectionID, _ registry: inout Registry, into actions: inout [Action]) {
            registry.connections[connection] = nil
            removed(connection)
            actions.append(.close(connection))
        }
    }
}

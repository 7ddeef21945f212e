import NIOCore
import Testing

@testable import TrustHTTP

/// `ConnectionPoolStateMachine.connectionDistrusted(_:)`, without sockets: a connection whose trust decision no
/// longer holds lends nothing more; idle, it closes at once; carrying requests, it closes when they end.
@Suite("ConnectionPoolStateMachine: distrusted connections")
struct ConnectionPoolDistrustTests {
    typealias Machine = ConnectionPoolStateMachine
    typealias C = Machine.ConnectionID

    static let key = PoolKey(origin: Origin(scheme: "https", host: "a.test", port: 443), trustKey: "reloading")
    static let now = NIODeadline.uptimeNanoseconds(1_000_000_000)

    static func machine() -> Machine {
        Machine(configuration: .init(maximumConnectionsPerKey: 4, maximumIdlePerKey: 4, idleTimeout: .seconds(60)))
    }

    /// Admits request `request` and makes the connection it is told to make, speaking `negotiated`.
    static func connected(_ machine: inout Machine, _ request: Int, _ negotiated: Machine.Negotiated) -> C {
        let admission = machine.requestArrived(Machine.RequestID(request), key: key, mayUseHTTP2: negotiated != .http1)
        guard case .connect(let id) = admission else {
            Issue.record("expected .connect, got \(admission)")
            return C(value: -1)
        }
        _ = machine.connectionCreated(id, negotiated, shareable: true)
        return id
    }

    @Test func anIdleHTTP1ConnectionClosesAtOnce() {
        var machine = Self.machine()
        let connection = Self.connected(&machine, 1, .http1)
        _ = machine.requestFinished(on: connection, reusable: true, at: Self.now)
        #expect(machine.connectionDistrusted(connection).contains(.close(connection)))
        #expect(machine.connectionCount == 0)
        // The next request makes a new connection.
        #expect(machine.requestArrived(Machine.RequestID(2), key: Self.key, mayUseHTTP2: false) == .connect(C(value: connection.value + 1)))
    }

    @Test func aLeasedHTTP1ConnectionFinishesItsRequestThenCloses() {
        var machine = Self.machine()
        let connection = Self.connected(&machine, 1, .http1)
        #expect(!machine.connectionDistrusted(connection).contains(.close(connection)))
        #expect(machine.connectionCount == 1)
        #expect(machine.requestFinished(on: connection, reusable: true, at: Self.now).contains(.close(connection)))
        #expect(machine.connectionCount == 0)
    }

    @Test func anHTTP2ConnectionLendsNoStreamAndClosesWithItsLast() {
        var machine = Self.machine()
        let connection = Self.connected(&machine, 1, .http2(maximumStreams: 10))
        #expect(!machine.connectionDistrusted(connection).contains(.close(connection)))
        // Streams free on it are not lent: the next request makes a new connection.
        guard case .connect(let other) = machine.requestArrived(Machine.RequestID(2), key: Self.key, mayUseHTTP2: true) else {
            Issue.record("a distrusted HTTP/2 connection lent a stream")
            return
        }
        #expect(other != connection)
        #expect(machine.requestFinished(on: connection, reusable: true, at: Self.now).contains(.close(connection)))
    }

    @Test func aConnectionNotTrackedIsIgnored() {
        var machine = Self.machine()
        #expect(machine.connectionDistrusted(C(value: 42)).isEmpty)
    }
}

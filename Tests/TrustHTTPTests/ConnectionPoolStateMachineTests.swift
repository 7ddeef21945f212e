import NIOCore
import Testing

@testable import TrustHTTP

/// Every transition of the pool's state machine, without sockets: requests and connections are IDs, time is
/// given with the events.
@Suite("ConnectionPoolStateMachine: every transition without sockets")
struct ConnectionPoolStateMachineTests {
    typealias Machine = ConnectionPoolStateMachine
    typealias C = Machine.ConnectionID

    static let key = PoolKey(origin: Origin(scheme: "https", host: "a.test", port: 443), trustKey: "t")
    static let other = PoolKey(origin: Origin(scheme: "https", host: "b.test", port: 443), trustKey: "t")
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    static func machine(limit: Int = 2, idle: Int = 2, idleTimeout: TimeAmount = .seconds(60)) -> Machine {
        Machine(configuration: .init(maximumConnectionsPerKey: limit, maximumIdlePerKey: idle, idleTimeout: idleTimeout))
    }

    static func r(_ value: Int) -> Machine.RequestID { Machine.RequestID(value) }

    /// Admits `request` and returns the connection it is told to make (recording an issue otherwise).
    static func connect(_ machine: inout Machine, _ request: Int, key: PoolKey = key, http2: Bool = true) -> C {
        let admission = machine.requestArrived(r(request), key: key, mayUseHTTP2: http2)
        guard case .connect(let id) = admission else {
            Issue.record("expected .connect, got \(admission)")
            return C(value: -1)
        }
        return id
    }

    @Test func requestArrivedOnAnEmptyKeyConnects() {
        var machine = Self.machine()
        let first = Self.connect(&machine, 1)
        #expect(machine.connectionCount == 1)
        // Another key has its own limit and queue.
        #expect(machine.requestArrived(Self.r(2), key: Self.other, mayUseHTTP2: true) == .connect(C(value: first.value + 1)))
    }

    @Test func requestArrivedWhileAConnectionThatMayBeHTTP2IsMadeWaits() {
        var machine = Self.machine()
        _ = Self.connect(&machine, 1)
        #expect(machine.requestArrived(Self.r(2), key: Self.key, mayUseHTTP2: true) == .wait)
        #expect(machine.waitingCount == 1)
    }

    @Test func requestArrivedWithoutHTTP2ConnectsUpToTheLimitThenWaits() {
        var machine = Self.machine(limit: 2)
        _ = Self.connect(&machine, 1, http2: false)
        _ = Self.connect(&machine, 2, http2: false)
        #expect(machine.requestArrived(Self.r(3), key: Self.key, mayUseHTTP2: false) == .wait)
    }

    @Test func connectionCreatedHTTP1LetsTheWaitersConnectUpToTheLimit() {
        var machine = Self.machine(limit: 2)
        let first = Self.connect(&machine, 1)
        #expect(machine.requestArrived(Self.r(2), key: Self.key, mayUseHTTP2: true) == .wait)
        #expect(machine.requestArrived(Self.r(3), key: Self.key, mayUseHTTP2: true) == .wait)
        let actions = machine.connectionCreated(first, .http1, shareable: true)
        #expect(actions == [.connect(C(value: first.value + 1), for: Self.r(2))])
        #expect(machine.waitingCount == 1)
        // Known HTTP/1.1 now: at the limit, a new request waits behind request 3.
        #expect(machine.requestArrived(Self.r(4), key: Self.key, mayUseHTTP2: true) == .wait)
    }

    @Test func requestFinishedReusableHandsTheConnectionToTheNextWaiterInOrder() {
        var machine = Self.machine(limit: 1)
        let first = Self.connect(&machine, 1)
        _ = machine.connectionCreated(first, .http1, shareable: true)
        #expect(machine.requestArrived(Self.r(2), key: Self.key, mayUseHTTP2: true) == .wait)
        #expect(machine.requestArrived(Self.r(3), key: Self.key, mayUseHTTP2: true) == .wait)
        #expect(machine.requestFinished(on: first, reusable: true, at: Self.start) == [.lease(first, to: Self.r(2))])
        #expect(machine.requestFinished(on: first, reusable: true, at: Self.start) == [.lease(first, to: Self.r(3))])
        #expect(machine.waitingCount == 0)
    }

    @Test func requestFinishedReusableWithNoWaiterGoesIdleAndSchedulesTheIdleTimerOnce() {
        var machine = Self.machine(limit: 2)
        let first = Self.connect(&machine, 1, http2: false)
        let second = Self.connect(&machine, 2, http2: false)
        _ = machine.connectionCreated(first, .http1, shareable: true)
        _ = machine.connectionCreated(second, .http1, shareable: true)
        #expect(machine.requestFinished(on: first, reusable: true, at: Self.start) == [.scheduleIdleTimer])
        #expect(machine.requestFinished(on: second, reusable: true, at: Self.start) == [])
        // Idle connections are lent most recently used first.
        #expect(machine.requestArrived(Self.r(3), key: Self.key, mayUseHTTP2: false) == .lease(second))
        #expect(machine.requestArrived(Self.r(4), key: Self.key, mayUseHTTP2: false) == .lease(first))
    }

    @Test func requestFinishedBeyondTheIdleLimitCloses() {
        var machine = Self.machine(limit: 2, idle: 1)
        let first = Self.connect(&machine, 1, http2: false)
        let second = Self.connect(&machine, 2, http2: false)
        _ = machine.connectionCreated(first, .http1, shareable: true)
        _ = machine.connectionCreated(second, .http1, shareable: true)
        _ = machine.requestFinished(on: first, reusable: true, at: Self.start)
        #expect(machine.requestFinished(on: second, reusable: true, at: Self.start) == [.close(second)])
        #expect(machine.connectionCount == 1)
    }

    @Test func requestFinishedNotReusableClosesAndTheNextWaiterConnects() {
        var machine = Self.machine(limit: 1)
        let first = Self.connect(&machine, 1)
        _ = machine.connectionCreated(first, .http1, shareable: true)
        #expect(machine.requestArrived(Self.r(2), key: Self.key, mayUseHTTP2: true) == .wait)
        let actions = machine.requestFinished(on: first, reusable: false, at: Self.start)
        #expect(actions == [.close(first), .connect(C(value: first.value + 1), for: Self.r(2))])
    }

    @Test func requestFinishedOnAConnectionOfItsOwnCloses() {
        var machine = Self.machine(limit: 1)
        let first = Self.connect(&machine, 1)
        _ = machine.connectionCreated(first, .http1, shareable: false)
        #expect(machine.requestArrived(Self.r(2), key: Self.key, mayUseHTTP2: true) == .wait)
        #expect(machine.requestFinished(on: first, reusable: true, at: Self.start) == [.close(first), .connect(C(value: first.value + 1), for: Self.r(2))])
    }

    @Test func connectionFailedGivesItsPlaceToTheWaitersWhoThenConnectEachOnTheirOwn() {
        var machine = Self.machine(limit: 3)
        let first = Self.connect(&machine, 1)
        #expect(machine.requestArrived(Self.r(2), key: Self.key, mayUseHTTP2: true) == .wait)
        #expect(machine.requestArrived(Self.r(3), key: Self.key, mayUseHTTP2: true) == .wait)
        let actions = machine.connectionFailed(first)
        #expect(actions == [.connect(C(value: first.value + 1), for: Self.r(2)), .connect(C(value: first.value + 2), for: Self.r(3))])
        #expect(machine.connectionCount == 2)
        #expect(machine.connectionFailed(first) == [])
    }

    @Test func connectionCreatedHTTP2LeasesStreamsToTheWaitersUpToTheAssumedLimit() {
        var machine = Self.machine(limit: 2)
        let first = Self.connect(&machine, 0)
        for request in 1...150 { #expect(machine.requestArrived(Self.r(request), key: Self.key, mayUseHTTP2: true) == .wait) }
        let actions = machine.connectionCreated(first, .http2(maximumStreams: nil), shareable: true)
        // Its creator holds the first stream: 99 more until the peer's SETTINGS say otherwise — and no second
        // connection while they have not.
        #expect(actions == (1...99).map { .lease(first, to: Self.r($0)) })
        #expect(machine.waitingCount == 51)
        #expect(machine.connectionCount == 1)
    }

    @Test func settingsChangedRaisesTheStreamLimitAndServesTheWaiters() {
        var machine = Self.machine(limit: 2)
        let first = Self.connect(&machine, 0)
        for request in 1...150 { _ = machine.requestArrived(Self.r(request), key: Self.key, mayUseHTTP2: true) }
        _ = machine.connectionCreated(first, .http2(maximumStreams: nil), shareable: true)
        let actions = machine.settingsChanged(on: first, maximumStreams: 1_000)
        #expect(actions == (100...150).map { .lease(first, to: Self.r($0)) })
        #expect(machine.waitingCount == 0)
        #expect(machine.connectionCount == 1)
    }

    @Test func settingsChangedLowersTheStreamLimitAndAFullConnectionGetsASecond() {
        var machine = Self.machine(limit: 2)
        let first = Self.connect(&machine, 0)
        _ = machine.connectionCreated(first, .http2(maximumStreams: nil), shareable: true)
        #expect(machine.requestArrived(Self.r(1), key: Self.key, mayUseHTTP2: true) == .lease(first))
        _ = machine.settingsChanged(on: first, maximumStreams: 2)
        // Full, its limit known: the next request makes a second connection; those after wait for either.
        let second = Self.connect(&machine, 2)
        #expect(second != first)
        #expect(machine.requestArrived(Self.r(3), key: Self.key, mayUseHTTP2: true) == .wait)
        #expect(machine.requestArrived(Self.r(4), key: Self.key, mayUseHTTP2: true) == .wait)
        // A stream ends on the first: the queue's head takes it.
        #expect(machine.requestFinished(on: first, reusable: true, at: Self.start) == [.lease(first, to: Self.r(3))])
        #expect(machine.connectionCreated(second, .http2(maximumStreams: 2), shareable: true) == [.lease(second, to: Self.r(4))])
        // Both full, at the limit of 2 connections: wait.
        #expect(machine.requestArrived(Self.r(5), key: Self.key, mayUseHTTP2: true) == .wait)
    }

    @Test func requestFinishedOnHTTP2FreesAStream() {
        var machine = Self.machine(limit: 1)
        let first = Self.connect(&machine, 0)
        _ = machine.connectionCreated(first, .http2(maximumStreams: 1), shareable: true)
        #expect(machine.requestArrived(Self.r(1), key: Self.key, mayUseHTTP2: true) == .wait)
        #expect(machine.requestFinished(on: first, reusable: false, at: Self.start) == [.lease(first, to: Self.r(1))])
        #expect(machine.requestFinished(on: first, reusable: true, at: Self.start) == [])
        #expect(machine.requestArrived(Self.r(2), key: Self.key, mayUseHTTP2: true) == .lease(first))
    }

    @Test func anHTTP2ConnectionOfItsOwnIsNotSharedAndClosesWithItsLastStream() {
        var machine = Self.machine(limit: 2)
        let first = Self.connect(&machine, 0)
        _ = machine.connectionCreated(first, .http2(maximumStreams: 100), shareable: false)
        #expect(machine.requestArrived(Self.r(1), key: Self.key, mayUseHTTP2: true) == .connect(C(value: first.value + 1)))
        #expect(machine.requestFinished(on: first, reusable: true, at: Self.start) == [.close(first)])
    }

    @Test func connectionClosedFreesItsPlaceForTheNextWaiter() {
        var machine = Self.machine(limit: 1)
        let first = Self.connect(&machine, 1)
        _ = machine.connectionCreated(first, .http1, shareable: true)
        _ = machine.requestArrived(Self.r(2), key: Self.key, mayUseHTTP2: true)
        #expect(machine.connectionClosed(first) == [.connect(C(value: first.value + 1), for: Self.r(2))])
        #expect(machine.connectionClosed(first) == [])
    }

    @Test func connectionClosedWhileIdleIsNoLongerLent() {
        var machine = Self.machine(limit: 1)
        let first = Self.connect(&machine, 1)
        _ = machine.connectionCreated(first, .http1, shareable: true)
        _ = machine.requestFinished(on: first, reusable: true, at: Self.start)
        #expect(machine.connectionClosed(first) == [])
        #expect(machine.requestArrived(Self.r(2), key: Self.key, mayUseHTTP2: true) == .connect(C(value: first.value + 1)))
    }

    @Test func connectionRetiredWithStreamsLendsNoneCountsUntilItsLastEndsThenCloses() {
        var machine = Self.machine(limit: 1)
        let first = Self.connect(&machine, 0)
        _ = machine.connectionCreated(first, .http2(maximumStreams: 1), shareable: true)
        _ = machine.requestArrived(Self.r(1), key: Self.key, mayUseHTTP2: true)
        // Still open for its stream, it still counts: the waiter gets no connection of its own yet.
        #expect(machine.connectionRetired(first) == [])
        #expect(machine.connectionCount == 1)
        #expect(machine.requestArrived(Self.r(2), key: Self.key, mayUseHTTP2: true) == .wait)
        // Its remaining stream ends: it closes, and its place goes to the queue's head.
        #expect(machine.requestFinished(on: first, reusable: true, at: Self.start) == [.close(first), .connect(C(value: first.value + 1), for: Self.r(1))])
        #expect(machine.connectionRetired(first) == [])
        #expect(machine.connectionClosed(first) == [])
        #expect(machine.connectionCount == 1)
        // An HTTP/1.1 connection is not retired (it is closed when it cannot be reused).
        var http1 = Self.machine()
        let connection = Self.connect(&http1, 1, http2: false)
        _ = http1.connectionCreated(connection, .http1, shareable: true)
        #expect(http1.connectionRetired(connection) == [])
        #expect(http1.connectionCount == 1)
    }

    @Test func connectionRetiredWithNoStreamClosesAtOnce() {
        var machine = Self.machine(limit: 1)
        let first = Self.connect(&machine, 0)
        _ = machine.connectionCreated(first, .http2(maximumStreams: 10), shareable: true)
        #expect(machine.requestFinished(on: first, reusable: true, at: Self.start) == [])
        #expect(machine.connectionRetired(first) == [.close(first)])
        #expect(machine.connectionCount == 0)
        #expect(machine.requestArrived(Self.r(1), key: Self.key, mayUseHTTP2: true) == .connect(C(value: first.value + 1)))
    }

    /// A peer that refuses every stream and never closes: each refusal retires a connection and the retry asks
    /// for another. The retired ones count while open, so the key never exceeds its limit.
    @Test func retiredConnectionsKeepTheKeyWithinItsLimit() {
        var machine = Self.machine(limit: 2)
        var open: Set<C> = []
        for request in 0..<10 {
            let admission = machine.requestArrived(Self.r(request), key: Self.key, mayUseHTTP2: true)
            guard case .connect(let connection) = admission else {
                #expect(admission == .wait)
                break
            }
            _ = machine.connectionCreated(connection, .http2(maximumStreams: 100), shareable: true)
            open.insert(connection)
            // The stream is refused while another request's stream stays open on it: retired, not closed.
            #expect(machine.requestArrived(Self.r(100 + request), key: Self.key, mayUseHTTP2: true) == .lease(connection))
            _ = machine.requestFinished(on: connection, reusable: false, at: Self.start)
            #expect(machine.connectionRetired(connection) == [])
            #expect(machine.connectionCount <= 2)
        }
        #expect(open.count == 2)
    }

    @Test func settingsWithoutTheParameterMakeTheAssumedLimitKnownAndAFullConnectionGetsASecond() {
        var machine = Self.machine(limit: 2)
        let first = Self.connect(&machine, 0)
        for request in 1...150 { _ = machine.requestArrived(Self.r(request), key: Self.key, mayUseHTTP2: true) }
        _ = machine.connectionCreated(first, .http2(maximumStreams: nil), shareable: true)
        // What `HTTP2ConnectionObserver` reports for a first SETTINGS frame without SETTINGS_MAX_CONCURRENT_STREAMS.
        let actions = machine.settingsChanged(on: first, maximumStreams: Machine.assumedConcurrentStreams)
        #expect(actions == [.connect(C(value: first.value + 1), for: Self.r(100))])
        #expect(machine.connectionCount == 2)
        #expect(machine.waitingCount == 50)
    }

    @Test func idleTimerFiredClosesTheExpiredAndStopsWhenNoneIsLeft() {
        var machine = Self.machine(limit: 2, idleTimeout: .seconds(10))
        let first = Self.connect(&machine, 1, http2: false)
        let second = Self.connect(&machine, 2, http2: false)
        _ = machine.connectionCreated(first, .http1, shareable: true)
        _ = machine.connectionCreated(second, .http1, shareable: true)
        #expect(machine.requestFinished(on: first, reusable: true, at: Self.start) == [.scheduleIdleTimer])
        _ = machine.requestFinished(on: second, reusable: true, at: Self.start + .seconds(5))
        #expect(machine.idleTimerFired(at: Self.start + .seconds(9)) == [])
        #expect(machine.idleTimerFired(at: Self.start + .seconds(10)) == [.close(first)])
        #expect(machine.idleTimerFired(at: Self.start + .seconds(15)) == [.close(second), .cancelIdleTimer])
        #expect(machine.connectionCount == 0)
        // The next idle connection schedules it again.
        let third = Self.connect(&machine, 3, http2: false)
        _ = machine.connectionCreated(third, .http1, shareable: true)
        #expect(machine.requestFinished(on: third, reusable: true, at: Self.start) == [.scheduleIdleTimer])
    }

    @Test func requestDeadlinePassedFailsAWaitingRequestAsTimedOut() {
        var machine = Self.machine(limit: 1)
        let first = Self.connect(&machine, 1, http2: false)
        _ = machine.connectionCreated(first, .http1, shareable: true)
        _ = machine.requestArrived(Self.r(2), key: Self.key, mayUseHTTP2: false)
        _ = machine.requestArrived(Self.r(3), key: Self.key, mayUseHTTP2: false)
        #expect(machine.requestDeadlinePassed(Self.r(2)) == [.fail(Self.r(2), .timedOut)])
        #expect(machine.requestDeadlinePassed(Self.r(2)) == [])
        // It left the queue: the connection goes to request 3.
        #expect(machine.requestFinished(on: first, reusable: true, at: Self.start) == [.lease(first, to: Self.r(3))])
        // A request already served: its deadline is the exchange's business.
        #expect(machine.requestDeadlinePassed(Self.r(3)) == [])
    }

    @Test func requestCancelledFailsAWaitingRequestAsCancelled() {
        var machine = Self.machine(limit: 1)
        let first = Self.connect(&machine, 1, http2: false)
        _ = machine.requestArrived(Self.r(2), key: Self.key, mayUseHTTP2: false)
        #expect(machine.requestCancelled(Self.r(2)) == [.fail(Self.r(2), .cancelled)])
        #expect(machine.waitingCount == 0)
        #expect(machine.connectionFailed(first) == [])
        #expect(machine.requestCancelled(Self.r(1)) == [])
    }

    @Test func newConnectionRequestedIsNotHeldBackByTheLimit() {
        var machine = Self.machine(limit: 1)
        let first = Self.connect(&machine, 1)
        #expect(machine.newConnectionRequested(key: Self.key) == .connect(C(value: first.value + 1)))
        #expect(machine.connectionCount == 2)
    }

    @Test func shutdownFailsTheWaitersAndClosesEveryConnection() {
        var machine = Self.machine(limit: 2)
        let first = Self.connect(&machine, 1, http2: false)
        let second = Self.connect(&machine, 2, http2: false)
        _ = machine.connectionCreated(first, .http1, shareable: true)
        _ = machine.requestFinished(on: first, reusable: true, at: Self.start)
        #expect(machine.requestArrived(Self.r(3), key: Self.key, mayUseHTTP2: false) == .lease(first))
        _ = machine.requestArrived(Self.r(4), key: Self.key, mayUseHTTP2: false)
        #expect(machine.shutdown() == [.fail(Self.r(4), .shutDown), .close(first), .cancelIdleTimer])
        #expect(machine.shutdown() == [])
        // Made after the shutdown: closed at once; no more requests.
        #expect(machine.connectionCreated(second, .http1, shareable: true) == [.close(second)])
        #expect(machine.requestArrived(Self.r(5), key: Self.key, mayUseHTTP2: false) == .fail(.shutDown))
        #expect(machine.newConnectionRequested(key: Self.key) == .fail(.shutDown))
        #expect(machine.connectionCount == 0)
    }
}

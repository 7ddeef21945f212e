import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

@testable import TrustHTTP

/// A connection attempt belongs to the pool, not to the request that caused it: a request that times out or is
/// cancelled while the connection is made leaves the attempt to the requests queued behind it.
@Suite("Connection attempts owned by the pool", .serialized, .timeLimit(.minutes(5)), .paced)
struct PoolOwnedConnectionTests {
    @Test func aRequestThatTimesOutLeavesItsConnectionToTheQueue() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        // The server's handshake takes 1 s; only one connection to the origin.
        let relay = try await DelayingRelay.start(to: server.port, delay: .seconds(1))
        let session = try labSession { $0.maximumConnectionsPerOrigin = 1 }
        let target = try #require(URL(string: "https://\(server.host):\(relay.port)/"))
        var impatient = TrustHTTPClientRequest(url: target)
        impatient.timeout = .milliseconds(300)
        let first = Task { try await session.data(for: impatient) }
        // The first request asks first (the order only decides which one the pool lets connect: the expectations
        // below hold whichever it is).
        try await Task.sleep(for: .milliseconds(50))
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<19 {
                group.addTask {
                    var request = TrustHTTPClientRequest(url: target)
                    request.timeout = .seconds(10)
                    return try await session.data(for: request).statusCode
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let error = await #expect(throws: TrustHTTPClientError.self) { try await first.value }
        #expect(error?.code == .timedOut, "\(String(describing: error))")
        #expect(statuses.count == 19 && statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        #expect(relay.acceptedCount == 1)
        #expect(server.acceptedConnectionCount == 1)
        await session.shutdown()
        try await relay.shutdown()
        try await server.shutdown()
    }

    @Test func aCancelledRequestLeavesItsConnectionToTheNextOne() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let relay = try await DelayingRelay.start(to: server.port, delay: .milliseconds(500))
        let session = try labSession { $0.maximumConnectionsPerOrigin = 1 }
        let target = try #require(URL(string: "https://\(server.host):\(relay.port)/"))
        let first = Task { try await session.data(for: TrustHTTPClientRequest(url: target)) }
        try await Task.sleep(for: .milliseconds(100))
        first.cancel()
        let error = await #expect(throws: TrustHTTPClientError.self) { try await first.value }
        #expect(error?.code == .cancelled, "\(String(describing: error))")
        // The attempt goes on: the next request is served on the connection it makes.
        #expect(try await session.data(for: TrustHTTPClientRequest(url: target)).statusCode == 200)
        #expect(relay.acceptedCount == 1)
        await session.shutdown()
        try await relay.shutdown()
        try await server.shutdown()
    }
}

/// Every transition of ``PoolConnectionAttempt``, without sockets (a failure stands for the connection: a
/// `Connection` needs a channel).
@Suite("PoolConnectionAttempt transitions")
struct PoolConnectionAttemptTests {
    struct Refused: Error {}

    static let loop = MultiThreadedEventLoopGroup.singleton.next()

    static func failed(_ outcome: PoolConnectionAttempt.Outcome) -> Bool {
        if case .finished(.failure(let error)) = outcome { return error is Refused }
        return false
    }

    @Test func finishedBeforeTheWaitIsDeliveredAtOnce() async {
        let attempt = PoolConnectionAttempt()
        #expect(attempt.finish(.failure(Refused())))
        #expect(Self.failed(await attempt.wait(timeout: .seconds(60), on: Self.loop)))
    }

    @Test func finishedWhileWaitedForResumesTheWaiter() async {
        let attempt = PoolConnectionAttempt()
        async let outcome = attempt.wait(timeout: .seconds(60), on: Self.loop)
        // Whether the wait has begun or not, the outcome is the request's.
        try? await Task.sleep(for: .milliseconds(20))
        #expect(attempt.finish(.failure(Refused())))
        #expect(Self.failed(await outcome))
    }

    @Test func aTimedOutWaitLeavesTheOutcomeToTheAttempt() async {
        let attempt = PoolConnectionAttempt()
        guard case .timedOut = await attempt.wait(timeout: .milliseconds(10), on: Self.loop) else {
            Issue.record("the wait did not time out")
            return
        }
        #expect(!attempt.finish(.failure(Refused())))
    }

    @Test func aCancelledWaitLeavesTheOutcomeToTheAttempt() async {
        let attempt = PoolConnectionAttempt()
        let waiter = Task { await attempt.wait(timeout: .seconds(60), on: Self.loop) }
        waiter.cancel()
        guard case .cancelled = await waiter.value else {
            Issue.record("the wait was not cancelled")
            return
        }
        #expect(!attempt.finish(.failure(Refused())))
    }

    @Test func givingUpBeforeWaitingAndAfterTheOutcome() async {
        let early = PoolConnectionAttempt()
        early.giveUp(.timedOut)
        guard case .timedOut = await early.wait(timeout: .seconds(60), on: Self.loop) else {
            Issue.record("an abandoned attempt's wait did not say why at once")
            return
        }
        #expect(!early.finish(.failure(Refused())))
        // Once the request has the outcome, giving up changes nothing and a second finish is ignored.
        let late = PoolConnectionAttempt()
        #expect(late.finish(.failure(Refused())))
        #expect(Self.failed(await late.wait(timeout: .seconds(60), on: Self.loop)))
        late.giveUp(.cancelled)
        #expect(late.finish(.failure(Refused())))
    }

}

/// The session's attempt tasks: each forgotten when it ends, cancelled at shutdown.
@Suite("PoolConnectionAttempts")
struct PoolConnectionAttemptsTests {
    final class Counter: Sendable {
        private let box = NIOLockedValueBox(0)
        var value: Int { box.withLockedValue { $0 } }
        func increment() { box.withLockedValue { $0 += 1 } }
    }

    @Test func attemptsForgetThemselvesWhenTheyEnd() async throws {
        let attempts = PoolConnectionAttempts()
        let ran = Counter()
        // Many short ones, ending while others are still being started.
        for _ in 0..<200 { attempts.start { ran.increment() } }
        for _ in 0..<500 where ran.value < 200 || attempts.kept > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(ran.value == 200)
        #expect(attempts.kept == 0)
    }

    @Test func shutdownCancelsAttemptsInProgressAndLater() async throws {
        let attempts = PoolConnectionAttempts()
        let cancelled = Counter()
        let started = AsyncStream<Void>.makeStream()
        attempts.start {
            started.continuation.yield()
            try? await Task.sleep(for: .seconds(600))
            if Task.isCancelled { cancelled.increment() }
        }
        for await _ in started.stream { break }
        #expect(attempts.kept == 1)
        await attempts.cancelAll()
        #expect(cancelled.value == 1)
        #expect(attempts.kept == 0)
        // One started after shutdown still runs (to tell its request), already cancelled.
        let after = AsyncStream<Bool>.makeStream()
        attempts.start { after.continuation.yield(Task.isCancelled) }
        var sawCancelled = false
        for await value in after.stream {
            sawCancelled = value
            break
        }
        #expect(sawCancelled)
        #expect(attempts.kept == 0)
    }

    struct Abandoned: Error {}

    /// A connection being made that only the test completes; abandoning it fails it, as closing its channel would.
    static func pending() -> (PendingConnection, EventLoopPromise<Connection>, Counter) {
        let promise = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: Connection.self)
        let abandoned = Counter()
        let pending = PendingConnection(
            connection: promise.futureResult,
            abandon: {
                abandoned.increment()
                promise.fail(Abandoned())
            })
        return (pending, promise, abandoned)
    }

    @Test func aTrackedConnectionIsKeptUntilItEnds() async throws {
        let attempts = PoolConnectionAttempts()
        let (pending, promise, abandoned) = Self.pending()
        let outcome = AsyncStream<Bool>.makeStream()
        attempts.track(pending) { outcome.continuation.yield((try? $0.get()) == nil) }
        #expect(attempts.kept == 1)
        promise.fail(PoolConnectionAttemptTests.Refused())
        var failed = false
        for await value in outcome.stream {
            failed = value
            break
        }
        #expect(failed)
        for _ in 0..<500 where attempts.kept > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(attempts.kept == 0)
        #expect(abandoned.value == 0)
    }

    @Test func shutdownAbandonsTrackedConnections() async {
        let attempts = PoolConnectionAttempts()
        let (pending, _, abandoned) = Self.pending()
        let told = Counter()
        attempts.track(pending) { _ in told.increment() }
        await attempts.cancelAll()
        // Abandoned, waited for, and its outcome handed on before shutdown returned.
        #expect(abandoned.value == 1)
        #expect(told.value == 1)
        #expect(attempts.kept == 0)
        // One tracked after shutdown is abandoned at once, and its outcome still handed on.
        let (late, _, lateAbandoned) = Self.pending()
        let lateOutcome = AsyncStream<Void>.makeStream()
        attempts.track(late) { _ in lateOutcome.continuation.yield() }
        for await _ in lateOutcome.stream { break }
        #expect(lateAbandoned.value == 1)
        #expect(attempts.kept == 0)
    }
}

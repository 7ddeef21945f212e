import Foundation
import NIOConcurrencyHelpers
import Testing
import TrustNIO
import TrustTestSupport

/// The reload skeleton the client and server identities share, on a value of one text file: swapped when the bytes
/// change, left alone when they do not, a rejection told once, a time-dependent one tried at each poll, observers
/// called with no lock held.
@Suite("ReloadingValue: a value that follows its files", .timeLimit(.minutes(1)))
struct ReloadingValueTests {
    enum Refusal: Error, Hashable {
        case unreadable
        case refused(String)
        /// The only refusal that may pass later with the same bytes.
        case notYet
    }

    /// One file, the reads and makes counted. Its value is its text and the generation (`text#2`); a text that
    /// starts with `bad` is refused, one that starts with `later` is not yet valid until ``valid`` is set.
    final class Harness: Sendable {
        let folder: IdentityFolder
        let reads = NIOLockedValueBox(0)
        let makes = NIOLockedValueBox(0)
        let valid = NIOLockedValueBox(false)
        let events = NIOLockedValueBox<[String]>([])
        let writes = NIOLockedValueBox(0)
        var path: String { folder["value.txt"] }

        init() throws { folder = try IdentityFolder() }

        /// Writes `text` by a rename, modified well before now (settled: `FileFingerprint.settlingTime`), so that
        /// only a stamp that moves makes a poll read it (each write a second earlier than the one before, so that
        /// no two writes share a stamp).
        func write(_ text: String) throws {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let modified = Date(
                timeIntervalSinceNow: -3_600
                    - Double(
                        writes.withLockedValue {
                            $0 += 1
                            return $0
                        }))
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: path)
        }

        func value() throws(Refusal) -> ReloadingValue<String, Refusal> {
            let (path, reads, makes, valid) = (self.path, self.reads, self.makes, self.valid)
            let value = try ReloadingValue<String, Refusal>(
                paths: [path], pollInterval: .milliseconds(10), dependsOnTime: { $0 == .notYet },
                read: { () throws(Refusal) in
                    reads.withLockedValue { $0 += 1 }
                    guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable }
                    return [Array(data)]
                },
                make: { (contents, generation) throws(Refusal) in
                    makes.withLockedValue { $0 += 1 }
                    let text = String(decoding: contents[0], as: UTF8.self)
                    if text.hasPrefix("bad") { throw .refused(text) }
                    if text.hasPrefix("later"), !valid.withLockedValue({ $0 }) { throw .notYet }
                    return "\(text)#\(generation)"
                })
            let events = self.events
            _ = value.observe { event in
                switch event {
                case .reloaded(let generation, let taken): events.withLockedValue { $0.append("taken \(taken) \(generation)") }
                case .rejected(let error): events.withLockedValue { $0.append("rejected \(error)") }
                }
            }
            return value
        }

        var counts: (reads: Int, makes: Int) { (reads.withLockedValue { $0 }, makes.withLockedValue { $0 }) }
    }

    @Test func newBytesAreTakenAndTheSameBytesAreNoChange() throws {
        let harness = try Harness()
        try harness.write("a")
        let value = try harness.value()
        #expect(value.value == "a#1" && value.generation == 1)
        // Stamps unmoved: not read.
        #expect(value.poll() == .unchanged)
        #expect(harness.counts == (1, 1))
        // Rewritten with the same bytes: the stamps moved, so read; the digest did not, so nothing made.
        try harness.write("a")
        #expect(value.poll() == .unchanged)
        #expect(harness.counts == (2, 1))
        try harness.write("bb")
        #expect(value.poll() == .reloaded(generation: 2))
        #expect(value.value == "bb#2" && value.generation == 2)
        #expect(harness.counts == (3, 2))
        // reload() reads whatever the stamps, and makes nothing of the bytes in force.
        #expect(value.reload() == .unchanged)
        #expect(harness.counts == (4, 2))
        #expect(harness.events.withLockedValue { $0 } == ["taken bb#2 2"])
    }

    @Test func aRejectionIsToldOnceAndItsBytesAreNotMadeAgainAtAPoll() throws {
        let harness = try Harness()
        try harness.write("a")
        let value = try harness.value()
        try harness.write("bad 1")
        #expect(value.reload() == .rejected(.refused("bad 1")))
        #expect(value.lastRejection == .refused("bad 1"))
        // reload() tries the bytes again; observers are not told again.
        #expect(value.reload() == .rejected(.refused("bad 1")))
        #expect(harness.counts.makes == 3)
        // Stamps unmoved: not read. Moved, the same bytes: read, not made again.
        #expect(value.poll() == .unchanged)
        #expect(harness.counts == (3, 3))
        try harness.write("bad 1")
        #expect(value.poll() == .unchanged)
        #expect(harness.counts == (4, 3))
        #expect(value.lastRejection == .refused("bad 1"))
        // Other bytes refused: told.
        try harness.write("bad 2")
        #expect(value.poll() == .rejected(.refused("bad 2")))
        // The bytes in force again: no change, the rejection cleared.
        try harness.write("a")
        #expect(value.poll() == .unchanged)
        #expect(value.lastRejection == nil)
        // Unreadable: rejected, told once.
        try FileManager.default.removeItem(atPath: harness.path)
        #expect(value.reload() == .rejected(.unreadable))
        #expect(value.reload() == .rejected(.unreadable))
        #expect(value.value == "a#1" && value.generation == 1)
        #expect(
            harness.events.withLockedValue { $0 } == [
                "rejected \(Refusal.refused("bad 1"))", "rejected \(Refusal.refused("bad 2"))", "rejected \(Refusal.unreadable)",
            ])
    }

    @Test func aTimeDependentRejectionIsTriedAtEachPoll() throws {
        let harness = try Harness()
        try harness.write("a")
        let value = try harness.value()
        try harness.write("later")
        #expect(value.reload() == .rejected(.notYet))
        // Stamps unmoved, yet read and made again: the same bytes may pass now.
        #expect(value.poll() == .rejected(.notYet))
        #expect(harness.counts == (3, 3))
        harness.valid.withLockedValue { $0 = true }
        #expect(value.poll() == .reloaded(generation: 2))
        #expect(value.value == "later#2" && value.lastRejection == nil)
        #expect(harness.events.withLockedValue { $0 } == ["rejected \(Refusal.notYet)", "taken later#2 2"])
    }

    /// Observers are called once the load is over, with no lock held: one that polls and reloads does not deadlock.
    @Test func anObserverMayPollAndReload() throws {
        let harness = try Harness()
        try harness.write("a")
        let value = try harness.value()
        let outcomes = NIOLockedValueBox<[ReloadingValue<String, Refusal>.Outcome]>([])
        let observation = value.observe { [weak value] _ in
            guard let value else { return }
            let (polled, reloaded) = (value.poll(), value.reload())
            outcomes.withLockedValue { $0 += [polled, reloaded] }
        }
        try harness.write("b")
        #expect(value.reload() == .reloaded(generation: 2))
        #expect(outcomes.withLockedValue { $0 } == [.unchanged, .unchanged])
        value.removeObserver(observation)
        try harness.write("c")
        #expect(value.reload() == .reloaded(generation: 3))
        #expect(outcomes.withLockedValue { $0 }.count == 2)
    }

    @Test func pollingTakesAChangeUntilStopped() async throws {
        let harness = try Harness()
        try harness.write("a")
        let value = try harness.value()
        let (taken, continuation) = AsyncStream<UInt64>.makeStream()
        _ = value.observe { event in
            if case .reloaded(let generation, _) = event { continuation.yield(generation) }
        }
        value.startPolling()
        try harness.write("b")
        var iterator = taken.makeAsyncIterator()
        #expect(await iterator.next() == 2)
        value.stopPolling()
        #expect(value.value == "b#2")
    }
}

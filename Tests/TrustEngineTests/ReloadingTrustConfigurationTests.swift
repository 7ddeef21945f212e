import Foundation
import Testing
import TrustLabPKI
import TrustTestSupport

@testable import Trust

/// Collects a configuration's events.
private final class EventLog: Sendable {
    let events = LockedState<[ReloadingTrustConfiguration.Event]>([])

    init(_ configuration: ReloadingTrustConfiguration) {
        configuration.observe { event in self.events.withLock { $0.append(event) } }
    }

    var all: [ReloadingTrustConfiguration.Event] { events.withLock { $0 } }
    var codes: [String] {
        all.map {
            switch $0 {
            case .reloaded(let generation, _): return "swapped \(generation)"
            case .rejected(let rejection): return rejection.code
            }
        }
    }
}

@Suite("Reloading trust configuration: checks, swaps, cache, polling", .paced)
struct ReloadingTrustConfigurationTests {
    @Test func theNextEvaluationFollowsTheNewFile() async throws {
        let file = try LabTrustConfigurationFile()
        defer { file.remove() }
        try file.write(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsA))
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: LabTrustConfigurationFile.psl)
        let log = EventLog(reloading)
        let underA = await reloading.evaluation(for: Lab.trust("good"))
        #expect(underA.decision.isTrusted && underA.generation == 1)
        #expect(Set(underA.decision.expectedPins) == Set(LabTrustConfigurationFile.pinsA))
        #expect(reloading.reload() == .unchanged)  // unchanged: nothing swapped
        try file.write(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsB))
        #expect(reloading.reload().generation != nil)
        let underB = await reloading.evaluation(for: Lab.trust("good"))
        #expect(underB.decision.isTrusted && underB.generation == 2 && reloading.generation == 2)
        #expect(Set(underB.decision.expectedPins) == Set(LabTrustConfigurationFile.pinsB))
        #expect(reloading.current.entry(for: "good.lab.test").pins?.sha256 == LabTrustConfigurationFile.pinsB)
        #expect(log.codes == ["swapped 2"])
    }

    @Test func eachRefusalKeepsTheLastGoodConfigurationWithItsReason() async throws {
        let file = try LabTrustConfigurationFile()
        defer { file.remove() }
        try file.write(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsA))
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: LabTrustConfigurationFile.psl)
        let log = EventLog(reloading)
        #expect(await reloading.evaluate(Lab.trust("good")).isTrusted)
        #expect(reloading.trustedHostPins["good.lab.test"]?.contains(LabTrustConfigurationFile.intermediate) == true)

        func refused(_ text: String?) -> TrustConfigurationRejection? {
            if let text { try? file.write(text) } else { try? FileManager.default.removeItem(atPath: file.path) }
            return reloading.reload().rejection
        }
        let malformed = refused(#"{"version": 1, "hosts": [{"host": "good.lab.test", "pins": {"sha256": []}}"#)
        guard case .malformed(let fileError) = malformed?.detail else {
            Issue.record("\(String(describing: malformed))")
            return
        }
        // What a client reads of it: the code and every problem, as the file error holds them.
        #expect(malformed?.code == "malformed" && malformed?.problems == fileError.problems && !fileError.problems.isEmpty)
        let unreadable = refused(nil)
        guard case .unreadable(let path, _) = unreadable?.detail else {
            Issue.record("\(String(describing: unreadable))")
            return
        }
        #expect(path == file.path)
        let expired = refused(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsB, extra: #", "expires": "2020-01-01T00:00:00Z""#))
        #expect(expired == .pinsExpired(host: "good.lab.test", expires: try #require(RFC3339.parse("2020-01-01T00:00:00Z"))))
        let lockout = refused(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsC))
        guard case .wouldLockOut(let host, let onPath, let newPins) = lockout?.detail else {
            Issue.record("\(String(describing: lockout))")
            return
        }
        #expect(host == "good.lab.test" && newPins == LabTrustConfigurationFile.pinsC)
        #expect(Set(onPath).isSuperset(of: [LabTrustConfigurationFile.intermediate, LabTrustConfigurationFile.leaf]))
        // The configuration in force is still the first, and still trusts the server.
        #expect(reloading.generation == 1 && reloading.current.entry(for: "good.lab.test").pins?.sha256 == LabTrustConfigurationFile.pinsA)
        #expect(await reloading.evaluate(Lab.trust("good")).isTrusted)
        #expect(log.codes == ["malformed", "unreadable", "pins-expired", "would-lock-out"])

        // The same lockout, said in the file: accepted, and the server is refused from then on.
        #expect(
            refused(
                LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsC).replacingOccurrences(of: #""pins""#, with: #""allowLockout": true, "pins""#))
                == nil)
        #expect(reloading.generation == 2 && log.codes.last == "swapped 2")
        #expect(await reloading.evaluate(Lab.trust("good")).codes.contains("pin-mismatch"))
        // A host locked out on purpose no longer holds the next configuration back.
        #expect(reloading.trustedHostPins["good.lab.test"] == nil)
        #expect(refused(LabTrustConfigurationFile.text([LabTrustConfigurationFile.backups[1], LabTrustConfigurationFile.backups[2]])) == nil)
    }

    @Test func aDecisionCachedUnderTheOldConfigurationIsNeverGivenAfterASwap() async throws {
        let file = try LabTrustConfigurationFile()
        defer { file.remove() }
        try file.write(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsA))
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: LabTrustConfigurationFile.psl)
        let trust = Lab.trust("good")
        #expect(await reloading.evaluation(for: trust).cached == false)
        let hit = await reloading.evaluation(for: trust)
        #expect(hit.cached && hit.decision.isTrusted)
        #expect(reloading.decisionWithoutSuspending(trust)?.isTrusted == true)
        var refusing = reloading.current.configuration
        refusing.hosts[0].pins = TrustConfiguration.Pins(sha256: LabTrustConfigurationFile.pinsC)
        refusing.hosts[0].allowLockout = true
        try reloading.apply(refusing)
        #expect(reloading.decisionWithoutSuspending(trust) == nil)
        let after = await reloading.evaluation(for: trust)
        #expect(!after.cached && !after.decision.isTrusted && after.generation == 2)
    }

    /// Polling: a touch without a change is no change; a rewrite within the same second (same size, same
    /// modification time) is seen while the stamp is too recent to tell; contents refused once are not refused
    /// again at every tick.
    @Test func pollingUsesTheStampAndTheContentHash() async throws {
        let file = try LabTrustConfigurationFile()
        defer { file.remove() }
        let modified = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let clock = LockedState(modified.addingTimeInterval(0.5))
        try file.write(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsA), modified: modified)
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: LabTrustConfigurationFile.psl) { clock.withLock { $0 } }
        let log = EventLog(reloading)
        // Touched: the stamp moved, the contents did not.
        try file.write(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsA), modified: modified.addingTimeInterval(1))
        #expect(reloading.poll() == .unchanged)
        // Rewritten in the same second to the same size: the stamp is unchanged but too recent to trust.
        let textB = LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsB)
        #expect(textB.utf8.count == LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsA).utf8.count)
        try file.write(textB, modified: modified.addingTimeInterval(1))
        #expect(reloading.poll().generation != nil)
        #expect(reloading.generation == 2)
        // Settled (the clock well past the modification, and the last look too): an unchanged stamp is not read again.
        clock.withLock { $0 = modified.addingTimeInterval(60) }
        #expect(reloading.poll() == .unchanged)  // read: the last look was too recent to tell
        let reads = reloading.fileReads
        #expect(reloading.poll() == .unchanged)
        #expect(reloading.fileReads == reads)
        // Malformed: refused once, not again for the same contents.
        try file.write("{", modified: modified.addingTimeInterval(70))
        #expect(reloading.poll().rejection != nil)
        try file.write("{", modified: modified.addingTimeInterval(80))
        #expect(reloading.poll() == .unchanged)
        #expect(log.codes == ["swapped 2", "malformed"])
    }

    /// A file refused as writable by others, then made private with `chmod 600` (same bytes, same modification
    /// time, the clock long past it): the mode is in the stamp, so the next poll reads it and puts it in force.
    @Test func aChmodAfterARefusalIsSeenAtTheNextPoll() async throws {
        let file = try LabTrustConfigurationFile()
        defer { file.remove() }
        let modified = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down) - 600)
        try file.write(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsA), modified: modified)
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: LabTrustConfigurationFile.psl)
        try file.write(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsB), modified: modified)
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: file.path)
        let refusal = reloading.poll().rejection
        #expect(refusal != nil)
        guard case .unreadable = refusal?.detail else {
            Issue.record("\(String(describing: refusal))")
            return
        }
        #expect(reloading.poll() == .unchanged)  // nothing moved: not read again
        try FileManager.default.setAttributes([.posixPermissions: 0o600, .modificationDate: modified], ofItemAtPath: file.path)
        #expect(reloading.poll().generation != nil)
        #expect(reloading.generation == 2 && reloading.current.entry(for: "good.lab.test").pins?.sha256 == LabTrustConfigurationFile.pinsB)
    }

    /// An evaluation that ends after a swap (made under the configuration before) does not bring back the pins
    /// the swap let go: the operator's next file is not refused as a lockout because of it.
    @Test func anEvaluationEndingAfterASwapRemembersNothing() async throws {
        let file = try LabTrustConfigurationFile()
        defer { file.remove() }
        try file.write(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsA))
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: LabTrustConfigurationFile.psl)
        let underA = await reloading.evaluation(for: Lab.trust("good"))
        #expect(underA.decision.isTrusted && reloading.trustedHostPins["good.lab.test"] != nil)
        let lockingOut = LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsC)
            .replacingOccurrences(of: #""pins""#, with: #""allowLockout": true, "pins""#)
        try file.write(lockingOut)
        #expect(reloading.reload().generation != nil)
        #expect(reloading.trustedHostPins["good.lab.test"] == nil)
        // The evaluation started under generation 1 ends now.
        reloading.remember(underA.decision, host: try PeerName(host: "good.lab.test"), generation: underA.generation)
        #expect(reloading.trustedHostPins["good.lab.test"] == nil)
        try file.write(LabTrustConfigurationFile.text([LabTrustConfigurationFile.backups[1], LabTrustConfigurationFile.backups[2]]))
        #expect(reloading.reload().generation != nil)
    }

    @Test func runPollsUntilCancelled() async throws {
        let file = try LabTrustConfigurationFile()
        defer { file.remove() }
        try file.write(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsA))
        let reloading = try ReloadingTrustConfiguration(
            contentsOf: file.path, publicSuffixes: LabTrustConfigurationFile.psl, pollInterval: .milliseconds(20))
        #expect(reloading.pollInterval == .milliseconds(20))
        let events = reloading.events()
        let polling = Task { await reloading.run() }
        try file.write(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsB))
        // Bounded only so that a broken poller fails the test instead of hanging it.
        let first = try await withThrowingTaskGroup(of: ReloadingTrustConfiguration.Event?.self) { group in
            group.addTask {
                for await event in events { return event }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(120))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        polling.cancel()
        await polling.value
        #expect(first?.generation == 2)
    }

    @Test func allowLockoutInTheFileFormat() throws {
        let text = LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsA).replacingOccurrences(of: #""pins""#, with: #""allowLockout": true, "pins""#)
        let configuration = try TrustConfiguration.parse(text, publicSuffixes: LabTrustConfigurationFile.psl)
        #expect(configuration.hosts[0].allowLockout && !configuration.base.allowLockout)
        #expect(try TrustConfiguration.parse(configuration.jsonText(), publicSuffixes: LabTrustConfigurationFile.psl) == configuration)
        #expect(
            try !TrustConfiguration.parse(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsA), publicSuffixes: LabTrustConfigurationFile.psl)
                .jsonText().contains(
                    "allowLockout"))
        let bad = text.replacingOccurrences(of: #""allowLockout": true"#, with: #""allowLockout": "yes""#)
        #expect(throws: TrustConfigurationFileError.self) { try TrustConfiguration.parse(bad, publicSuffixes: LabTrustConfigurationFile.psl) }
    }

    /// A configuration from another source (a signed bundle) goes through the same checks.
    @Test func applyChecksAsAFileIsChecked() async throws {
        let first = try TrustConfiguration.parse(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsA), publicSuffixes: LabTrustConfigurationFile.psl)
        let reloading = try ReloadingTrustConfiguration(configuration: first, publicSuffixes: LabTrustConfigurationFile.psl)
        #expect(await reloading.evaluate(Lab.trust("good")).isTrusted)
        var locking = first
        locking.hosts[0].pins = TrustConfiguration.Pins(sha256: LabTrustConfigurationFile.pinsC)
        #expect(throws: TrustConfigurationRejection.self) { try reloading.apply(locking) }
        #expect(reloading.reload().rejection != nil)  // no file
        var rotated = first
        rotated.hosts[0].pins = TrustConfiguration.Pins(sha256: LabTrustConfigurationFile.pinsB)
        try reloading.apply(rotated)
        #expect(reloading.generation == 2)
    }
}

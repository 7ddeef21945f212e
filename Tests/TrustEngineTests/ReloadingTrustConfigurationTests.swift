import Foundation
import Testing
import Trust
import TrustLabPKI
import TrustTestSupport

/// A configuration file on disk that a test rewrites; pins A (the intermediate + a backup), B (the leaf + another
/// backup) and C (two keys the lab server never presents).
private struct ConfigurationFile {
    static let psl = PublicSuffixList(contents: "test\ncom\n")
    static let intermediate = Lab.pki.intermediate.certificate.spkiPin
    static let leaf = Lab.chain("good")[0].spkiPin
    static let backups = (1...3).map { SPKIPin(subjectPublicKeyInfoDER: [UInt8($0)]) }
    static let pinsA = [intermediate, backups[0]]
    static let pinsB = [leaf, backups[1]]
    static let pinsC = [backups[0], backups[2]]

    let directory: String
    var path: String { directory + "/trust.json" }

    init() throws {
        directory = NSTemporaryDirectory() + "swift-trust-reloading-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    static func text(_ pins: [SPKIPin], extra: String = "") -> String {
        let rootPEM = String(reflecting: Lab.pki.root.certificate.pemString)
        return """
            {"version": 1, "base": {"anchors": {"pem": [\(rootPEM)], "replaceSystem": true}},
             "hosts": [{"host": "good.lab.test", "anchors": {"pem": [\(rootPEM)], "replaceSystem": true}, "pins": {"sha256": [\(pins.map { "\"\($0)\"" }.joined(separator: ", "))]\(extra)}}]}
            """
    }

    func write(_ text: String, modified: Date? = nil) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        var attributes: [FileAttributeKey: Any] = [.posixPermissions: 0o600]
        if let modified { attributes[.modificationDate] = modified }
        try FileManager.default.setAttributes(attributes, ofItemAtPath: path)
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

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
            case .swapped(let generation): return "swapped \(generation)"
            case .rejected(let rejection): return rejection.code
            }
        }
    }
}

@Suite("Reloading trust configuration: checks, swaps, cache, polling", .paced)
struct ReloadingTrustConfigurationTests {
    @Test func theNextEvaluationFollowsTheNewFile() async throws {
        let file = try ConfigurationFile()
        defer { file.remove() }
        try file.write(ConfigurationFile.text(ConfigurationFile.pinsA))
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: ConfigurationFile.psl)
        let log = EventLog(reloading)
        let underA = await reloading.evaluation(for: Lab.trust("good"))
        #expect(underA.decision.isTrusted && underA.generation == 1)
        #expect(Set(underA.decision.expectedPins) == Set(ConfigurationFile.pinsA))
        #expect(try reloading.reload() == false)  // unchanged: nothing swapped
        try file.write(ConfigurationFile.text(ConfigurationFile.pinsB))
        #expect(try reloading.reload() == true)
        let underB = await reloading.evaluation(for: Lab.trust("good"))
        #expect(underB.decision.isTrusted && underB.generation == 2 && reloading.generation == 2)
        #expect(Set(underB.decision.expectedPins) == Set(ConfigurationFile.pinsB))
        #expect(reloading.current.entry(for: "good.lab.test").pins?.sha256 == ConfigurationFile.pinsB)
        #expect(log.codes == ["swapped 2"])
    }

    @Test func eachRefusalKeepsTheLastGoodConfigurationWithItsReason() async throws {
        let file = try ConfigurationFile()
        defer { file.remove() }
        try file.write(ConfigurationFile.text(ConfigurationFile.pinsA))
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: ConfigurationFile.psl)
        let log = EventLog(reloading)
        #expect(await reloading.evaluate(Lab.trust("good")).isTrusted)
        #expect(reloading.trustedHostPins["good.lab.test"]?.contains(ConfigurationFile.intermediate) == true)

        func refused(_ text: String?) -> TrustConfigurationRejection? {
            if let text { try? file.write(text) } else { try? FileManager.default.removeItem(atPath: file.path) }
            do {
                try reloading.reload()
                return nil
            } catch {
                return error
            }
        }
        let malformed = refused(#"{"version": 1, "hosts": [{"host": "good.lab.test", "pins": {"sha256": []}}"#)
        guard case .malformed = malformed else {
            Issue.record("\(String(describing: malformed))")
            return
        }
        let unreadable = refused(nil)
        guard case .unreadable(let path, _) = unreadable else {
            Issue.record("\(String(describing: unreadable))")
            return
        }
        #expect(path == file.path)
        let expired = refused(ConfigurationFile.text(ConfigurationFile.pinsB, extra: #", "expires": "2020-01-01T00:00:00Z""#))
        #expect(expired == .pinsExpired(host: "good.lab.test", expires: try #require(RFC3339.parse("2020-01-01T00:00:00Z"))))
        let lockout = refused(ConfigurationFile.text(ConfigurationFile.pinsC))
        guard case .wouldLockOut(let host, let onPath, let newPins) = lockout else {
            Issue.record("\(String(describing: lockout))")
            return
        }
        #expect(host == "good.lab.test" && newPins == ConfigurationFile.pinsC)
        #expect(Set(onPath).isSuperset(of: [ConfigurationFile.intermediate, ConfigurationFile.leaf]))
        // The configuration in force is still the first, and still trusts the server.
        #expect(reloading.generation == 1 && reloading.current.entry(for: "good.lab.test").pins?.sha256 == ConfigurationFile.pinsA)
        #expect(await reloading.evaluate(Lab.trust("good")).isTrusted)
        #expect(log.codes == ["malformed", "unreadable", "pins-expired", "would-lock-out"])

        // The same lockout, said in the file: accepted, and the server is refused from then on.
        #expect(refused(ConfigurationFile.text(ConfigurationFile.pinsC).replacingOccurrences(of: #""pins""#, with: #""allowLockout": true, "pins""#)) == nil)
        #expect(reloading.generation == 2 && log.codes.last == "swapped 2")
        #expect(await reloading.evaluate(Lab.trust("good")).codes.contains("pin-mismatch"))
        // A host locked out on purpose no longer holds the next configuration back.
        #expect(reloading.trustedHostPins["good.lab.test"] == nil)
        #expect(refused(ConfigurationFile.text([ConfigurationFile.backups[1], ConfigurationFile.backups[2]])) == nil)
    }

    @Test func aDecisionCachedUnderTheOldConfigurationIsNeverGivenAfterASwap() async throws {
        let file = try ConfigurationFile()
        defer { file.remove() }
        try file.write(ConfigurationFile.text(ConfigurationFile.pinsA))
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: ConfigurationFile.psl)
        let trust = Lab.trust("good")
        #expect(await reloading.evaluation(for: trust).cached == false)
        let hit = await reloading.evaluation(for: trust)
        #expect(hit.cached && hit.decision.isTrusted)
        #expect(reloading.decisionWithoutSuspending(trust)?.isTrusted == true)
        var refusing = reloading.current.configuration
        refusing.hosts[0].pins = TrustConfiguration.Pins(sha256: ConfigurationFile.pinsC)
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
        let file = try ConfigurationFile()
        defer { file.remove() }
        let modified = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let clock = LockedState(modified.addingTimeInterval(0.5))
        try file.write(ConfigurationFile.text(ConfigurationFile.pinsA), modified: modified)
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: ConfigurationFile.psl) { clock.withLock { $0 } }
        let log = EventLog(reloading)
        // Touched: the stamp moved, the contents did not.
        try file.write(ConfigurationFile.text(ConfigurationFile.pinsA), modified: modified.addingTimeInterval(1))
        #expect(try reloading.reloadIfChanged() == false)
        // Rewritten in the same second to the same size: the stamp is unchanged but too recent to trust.
        let textB = ConfigurationFile.text(ConfigurationFile.pinsB)
        #expect(textB.utf8.count == ConfigurationFile.text(ConfigurationFile.pinsA).utf8.count)
        try file.write(textB, modified: modified.addingTimeInterval(1))
        #expect(try reloading.reloadIfChanged() == true)
        #expect(reloading.generation == 2)
        // Settled (the clock well past the modification): an unchanged stamp is not read again.
        clock.withLock { $0 = modified.addingTimeInterval(60) }
        #expect(try reloading.reloadIfChanged() == false)
        // Malformed: refused once, not again for the same contents.
        try file.write("{", modified: modified.addingTimeInterval(70))
        #expect(throws: TrustConfigurationRejection.self) { try reloading.reloadIfChanged() }
        try file.write("{", modified: modified.addingTimeInterval(80))
        #expect(try reloading.reloadIfChanged() == false)
        #expect(log.codes == ["swapped 2", "malformed"])
    }

    @Test func runPollsUntilCancelled() async throws {
        let file = try ConfigurationFile()
        defer { file.remove() }
        try file.write(ConfigurationFile.text(ConfigurationFile.pinsA))
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: ConfigurationFile.psl)
        let events = reloading.events()
        let polling = Task { await reloading.run(pollingEvery: .milliseconds(20)) }
        try file.write(ConfigurationFile.text(ConfigurationFile.pinsB))
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
        #expect(first == .swapped(generation: 2))
    }

    @Test func allowLockoutInTheFileFormat() throws {
        let text = ConfigurationFile.text(ConfigurationFile.pinsA).replacingOccurrences(of: #""pins""#, with: #""allowLockout": true, "pins""#)
        let configuration = try TrustConfiguration.parse(text, publicSuffixes: ConfigurationFile.psl)
        #expect(configuration.hosts[0].allowLockout && !configuration.base.allowLockout)
        #expect(try TrustConfiguration.parse(configuration.jsonText(), publicSuffixes: ConfigurationFile.psl) == configuration)
        #expect(
            try !TrustConfiguration.parse(ConfigurationFile.text(ConfigurationFile.pinsA), publicSuffixes: ConfigurationFile.psl).jsonText().contains(
                "allowLockout"))
        let bad = text.replacingOccurrences(of: #""allowLockout": true"#, with: #""allowLockout": "yes""#)
        #expect(throws: TrustConfigurationFileError.self) { try TrustConfiguration.parse(bad, publicSuffixes: ConfigurationFile.psl) }
    }

    /// A configuration from another source (a signed bundle) goes through the same checks.
    @Test func applyChecksAsAFileIsChecked() async throws {
        let first = try TrustConfiguration.parse(ConfigurationFile.text(ConfigurationFile.pinsA), publicSuffixes: ConfigurationFile.psl)
        let reloading = try ReloadingTrustConfiguration(configuration: first, publicSuffixes: ConfigurationFile.psl)
        #expect(await reloading.evaluate(Lab.trust("good")).isTrusted)
        var locking = first
        locking.hosts[0].pins = TrustConfiguration.Pins(sha256: ConfigurationFile.pinsC)
        #expect(throws: TrustConfigurationRejection.self) { try reloading.apply(locking) }
        #expect(throws: TrustConfigurationRejection.self) { try reloading.reload() }  // no file
        var rotated = first
        rotated.hosts[0].pins = TrustConfiguration.Pins(sha256: ConfigurationFile.pinsB)
        try reloading.apply(rotated)
        #expect(reloading.generation == 2)
    }
}

import Foundation
import NIOConcurrencyHelpers
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustNIO
import TrustTestSupport

/// The updater plugged into a ReloadingTrustConfiguration: what it accepts is swapped in, what either refuses
/// leaves the configuration in force.
@Suite("Signed configuration updates into a ReloadingTrustConfiguration", .paced, .timeLimit(.minutes(5)))
struct SignedConfigurationReloadingTests {
    typealias Fixture = SignedConfigurationUpdaterTests

    @Test func acceptedBundlesAreSwappedInAndRefusalsKeepTheConfigurationInForce() async throws {
        try await Fixture.withServer { server, state in
            let reloading = try ReloadingTrustConfiguration(configuration: Fixture.builtIn)
            let updater = try SignedConfigurationUpdater(
                source: .init(bundleURL: server.url("trust.json")), trustedKeys: [Fixture.key.publicKey], builtIn: Fixture.builtIn,
                stateFile: state, installingInto: reloading, configuration: try Fixture.sessionConfiguration())
            try Fixture.publish(Fixture.bundle(5), on: server)
            guard case .installed(5, _, _) = await updater.refresh(now: Fixture.now) else {
                Issue.record("the good bundle was not installed")
                return
            }
            #expect(reloading.generation == 2)
            #expect(reloading.current.configuration.base.minimumRSABits == 3072)

            // Signed, but refused by the reloading configuration: a pin set that has already expired.
            var expiredPins = TrustConfiguration()
            var entry = TrustConfiguration.Entry()
            entry.host = try HostPattern("pinned.example.com")
            entry.pins = .init(
                sha256: [try SPKIPin(digest: [UInt8](repeating: 1, count: 32)), try SPKIPin(digest: [UInt8](repeating: 2, count: 32))],
                expires: Date(timeIntervalSince1970: 1_000_000_000))
            expiredPins.hosts = [entry]
            let bundle = TrustConfigurationBundle(configuration: expiredPins, sequence: 6, expires: Fixture.now.addingTimeInterval(60))
            try Fixture.publish(Array(bundle.jsonText().utf8), on: server)
            let refused = await updater.refresh(now: Fixture.now)
            guard case .rejected(let rejection) = refused, case .pinsExpired(let host, _) = rejection.detail else {
                Issue.record("expected the reloading configuration's refusal: \(refused)")
                return
            }
            #expect(host.contains("pinned.example.com"))
            // A bad signature never reaches it.
            try Fixture.publish(Fixture.bundle(7), signature: Array(repeating: 0, count: 64), on: server)
            guard case .rejected(let rejection) = await updater.refresh(now: Fixture.now), case .badSignature = rejection.detail else {
                Issue.record("a bad signature was not refused")
                return
            }
            #expect(reloading.generation == 2)
            #expect(reloading.current.configuration.base.minimumRSABits == 3072)
            await updater.shutdown()
        }
    }

    /// The lab's configuration for good.lab.test with `pins` (see `LabTrustConfigurationFile`).
    static func labConfiguration(_ pins: [SPKIPin], extra: String = "") throws -> TrustConfiguration {
        try TrustConfiguration.parse(LabTrustConfigurationFile.text(pins, extra: extra), publicSuffixes: LabTrustConfigurationFile.psl)
    }

    /// A bundle that rotated good.lab.test to pins A (which its server presents) over a built-in configuration
    /// with pins C (which it never presents); the host has been trusted under the bundle. `builtInPinsExpire`
    /// gives the built-in pins an end the reloading configuration's clock then passes.
    static func withRotatedBundle(
        builtInPinsExpire: Date? = nil,
        _ body: (SignedConfigurationUpdater, ReloadingTrustConfiguration, TrustConfiguration, LockedState<Date>, Date) async throws -> Void
    ) async throws {
        try await Fixture.withServer { server, state in
            let extra = builtInPinsExpire.map { #", "expires": "\#(RFC3339.string($0))""# } ?? ""
            let builtIn = try labConfiguration(LabTrustConfigurationFile.pinsC, extra: extra)
            let clock = LockedState(Date())
            let reloading = try ReloadingTrustConfiguration(configuration: builtIn, now: { clock.withLock { $0 } })
            let updater = try SignedConfigurationUpdater(
                source: .init(bundleURL: server.url("trust.json")), trustedKeys: [Fixture.key.publicKey], builtIn: builtIn,
                stateFile: state, installingInto: reloading, configuration: try Fixture.sessionConfiguration())
            let expires = Fixture.now.addingTimeInterval(3600)
            let bundle = TrustConfigurationBundle(configuration: try labConfiguration(LabTrustConfigurationFile.pinsA), sequence: 1, expires: expires)
            try Fixture.publish(Array(bundle.jsonText().utf8), on: server)
            let installed = await updater.refresh(now: Fixture.now)
            #expect(installed == .installed(sequence: 1, expires: expires, signedBy: Fixture.key.publicKey.id))
            #expect(await reloading.evaluate(Lab.trust("good")).isTrusted)
            #expect(reloading.trustedHostPins["good.lab.test"]?.contains(LabTrustConfigurationFile.intermediate) == true)
            try await body(updater, reloading, builtIn, clock, expires)
            await updater.shutdown()
        }
    }

    /// The built-in configuration comes back when the bundle expires even though it would lock out a host the
    /// bundle trusted: a lock-out check must not keep an expired bundle in force.
    @Test func anExpiredBundleGivesWayToTheBuiltInConfigurationEvenOverALockout() async throws {
        try await Self.withRotatedBundle { updater, reloading, builtIn, _, expires in
            let event = await updater.refresh(now: expires)
            #expect(event == .fellBackToBuiltIn(.bundleExpired(expires: expires)))
            #expect(reloading.current.configuration == builtIn)
            #expect(await reloading.evaluate(Lab.trust("good")).codes.contains("pin-mismatch"))
        }
    }

    /// A built-in configuration refused all the same (its pins have expired) gives way to one that trusts no
    /// server, said as such: the expired bundle is not left in force.
    @Test func aRefusedBuiltInConfigurationFailsClosed() async throws {
        let pinsEnd = Fixture.now.addingTimeInterval(7200)
        try await Self.withRotatedBundle(builtInPinsExpire: pinsEnd) { updater, reloading, builtIn, clock, expires in
            clock.withLock { $0 = pinsEnd.addingTimeInterval(1) }
            let event = await updater.refresh(now: pinsEnd.addingTimeInterval(1))
            guard case .failedClosed(let fetched, let refused) = event, case .bundleExpired(expires) = fetched.detail,
                case .pinsExpired(let host, pinsEnd) = refused.detail
            else {
                Issue.record("expected to fail closed: \(event)")
                return
            }
            #expect(host == "good.lab.test")
            #expect(reloading.current.configuration != builtIn)
            #expect(reloading.current.configuration.hosts.isEmpty && reloading.current.configuration.base.pins?.sha256.count == 2)
            #expect(!(await reloading.evaluate(Lab.trust("good")).isTrusted))
            #expect("\(event)".contains("no server is trusted"))
        }
    }

    /// ``SignedConfigurationUpdater/run(every:)`` acts at the `expires` of the bundle in force, not only at its
    /// interval (an hour here): the built-in configuration comes back on its own.
    @Test func runActsWhenTheBundleExpires() async throws {
        try await Fixture.withServer { server, state in
            let events = NIOLockedValueBox<[SignedConfigurationUpdater.Event]>([])
            let reloading = try ReloadingTrustConfiguration(configuration: Fixture.builtIn)
            let updater = try SignedConfigurationUpdater(
                source: .init(bundleURL: server.url("trust.json")), trustedKeys: [Fixture.key.publicKey], builtIn: Fixture.builtIn,
                stateFile: state, installingInto: reloading, configuration: try Fixture.sessionConfiguration(),
                onEvent: { event in events.withLockedValue { $0.append(event) } })
            // Real time: the first refresh happens at once, long before these seconds are up.
            let expires = Date().addingTimeInterval(5)
            try Fixture.publish(Fixture.bundle(1, expires: expires), on: server)
            let running = Task { await updater.run(every: .seconds(3600)) }
            var fellBack = false
            for _ in 0..<1200 where !fellBack {
                try await Task.sleep(for: .milliseconds(50))
                fellBack = events.withLockedValue { $0 }.contains { if case .fellBackToBuiltIn = $0 { true } else { false } }
            }
            running.cancel()
            await running.value
            let seen = events.withLockedValue { $0 }
            guard case .installed(1, _, _)? = seen.first else {
                Issue.record("the bundle was not installed first: \(seen)")
                return
            }
            #expect(fellBack, "\(seen)")
            #expect(reloading.current.configuration == Fixture.builtIn)
            await updater.shutdown()
        }
    }
}

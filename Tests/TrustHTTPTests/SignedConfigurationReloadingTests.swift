import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
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
            guard case .rejected(.pinsExpired(let host, _)) = refused else {
                Issue.record("expected the reloading configuration's refusal: \(refused)")
                return
            }
            #expect(host.contains("pinned.example.com"))
            // A bad signature never reaches it.
            try Fixture.publish(Fixture.bundle(7), signature: Array(repeating: 0, count: 64), on: server)
            guard case .rejected(.badSignature) = await updater.refresh(now: Fixture.now) else {
                Issue.record("a bad signature was not refused")
                return
            }
            #expect(reloading.generation == 2)
            #expect(reloading.current.configuration.base.minimumRSABits == 3072)
            await updater.shutdown()
        }
    }
}

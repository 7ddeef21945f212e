import ClientRecipes
import Foundation
import Testing
import Trust
import TrustHTTP
import TrustLab
import TrustLabPKI

@Suite struct SignedTrustUpdatesTests {
    @Test("a signed bundle is installed once; a replayed sequence and a bad signature are refused; the monitor agrees")
    func updates() async throws {
        try await RecipesLab.withTemporaryFolder { folder in
            let key = TrustConfigurationSigningKey()
            let roots = RecipesLab.rootsJSON
            func configuration(_ hosts: [String]) -> String {
                let entries = hosts.map { #"{"host": "\#($0)", "anchors": {"pem": [\#(roots)], "replaceSystem": true}}"# }
                return #"{"version": 1, "hosts": [\#(entries.joined(separator: ", "))]}"#
            }
            let file = folder.appendingPathComponent("trust.json")
            try Data(configuration(["**.lab.test"]).utf8).write(to: file)
            let first = try TrustBundlePublisher.publish(configurationFile: file.path, sequence: 1, expires: Date() + 86_400, key: key)

            let identity = try #require(RecipesLab.pki.servers["good"])
            let cdn = try await LabFileServer.start(host: "good.lab.test", chain: identity.chain, privateKey: identity.privateKey)
            #expect(cdn.host == "good.lab.test" && cdn.port > 0)
            cdn.publish(first.bundle, as: "trust-bundle.json")
            cdn.publish(first.signature, as: "trust-bundle.json.sig")

            let builtIn = try TrustConfiguration.parse(#"{"version": 1, "hosts": []}"#)
            let target = try ReloadingTrustConfiguration(configuration: builtIn, baseDirectory: folder.path)
            let updates = try SignedTrustUpdates(
                bundleURL: cdn.url("trust-bundle.json"), pinnedKeys: [key.publicKey.base64], builtIn: builtIn,
                stateFile: folder.appendingPathComponent("bundle.state").path, target: target, fetching: RecipesLab.configuration())
            #expect(updates.summary.contains("(signature trust-bundle.json.sig); bundles up to 262144 bytes, signatures up to 200"))

            let installed = await updates.refresh()
            let generation = target.generation
            let again = await updates.refresh()
            // A replay: another configuration under a sequence already taken.
            try Data(configuration(["**.lab.test", "api.example.com"]).utf8).write(to: file)
            let replay = try TrustBundlePublisher.publish(configurationFile: file.path, sequence: 1, expires: Date() + 86_400, key: key)
            cdn.publish(replay.bundle, as: "trust-bundle.json")
            cdn.publish(replay.signature, as: "trust-bundle.json.sig")
            let replayed = await updates.refresh()
            // Signed by a key the app does not pin.
            let forged = try TrustBundlePublisher.publish(
                configurationFile: file.path, sequence: 2, expires: Date() + 86_400, key: TrustConfigurationSigningKey())
            cdn.publish(forged.bundle, as: "trust-bundle.json")
            cdn.publish(forged.signature, as: "trust-bundle.json.sig")
            let forgedEvent = await updates.refresh()
            let sequence = await updates.lastSequence()

            // The monitor checks what is published now: the forged bundle.
            let monitor = PublishedBundleMonitor()
            let stateFile = folder.appendingPathComponent("monitor.state").path
            let seenForged = try await monitor.check(
                bundleURL: cdn.url("trust-bundle.json"), pinnedKey: key.publicKey, stateFile: stateFile, fetching: RecipesLab.configuration())
            let good = try TrustBundlePublisher.publish(configurationFile: file.path, sequence: 3, expires: Date() + 86_400, key: key)
            cdn.publish(good.bundle, as: "trust-bundle.json")
            cdn.publish(good.signature, as: "trust-bundle.json.sig")
            let seenGood = try await monitor.check(
                bundleURL: cdn.url("trust-bundle.json"), pinnedKey: key.publicKey, stateFile: stateFile, fetching: RecipesLab.configuration())
            await updates.updater.shutdown()
            await cdn.shutdown()

            guard case .installed(let installedSequence, _, _) = installed else {
                Issue.record("not installed: \(installed)")
                return
            }
            #expect(installedSequence == 1 && generation == 2)
            #expect(again == .unchanged(sequence: 1))
            #expect(replayed.rejection?.code == "rollback", "\(replayed)")
            #expect(forgedEvent.rejection?.code == "bad-signature", "\(forgedEvent)")
            #expect(sequence == 1 && target.generation == 2)
            #expect(seenForged.failure?.code == "bad-signature")
            #expect(seenGood.success == 2)
        }
    }
}

extension SignedConfigurationUpdater.Event {
    var rejection: TrustConfigurationRejection? {
        if case .rejected(let rejection) = self { return rejection }
        return nil
    }
}

extension Result {
    var success: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

import Trust
import TrustHTTP
import TrustLab
import TrustNIO
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The demo's live-trust rows: trust that changes while the process runs (a configuration file reloaded, a signed
/// bundle fetched and a replayed one refused) and a peer trusted by its SPIFFE ID alone.
extension DemoCommand {
    /// A live row's steps around its requests: `request` sends the row's request through the row's one ``TrustHTTPClient``,
    /// as many times as the steps need; the steps return the row's outcome, or throw when one goes otherwise.
    typealias Steps = @Sendable (_ request: () async throws -> Outcome) async throws -> Outcome

    /// What a request, or a live row, came to: the outcome and a few words on why.
    struct Outcome: Sendable {
        var result: Expected
        var why: String
    }

    /// A live row's step that went otherwise than it should: the row fails with it.
    struct StepFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// What the live rows use besides the lab's servers: a private folder for their files, the configuration server
    /// (HTTPS, the lab's `good` chain) and a server whose certificate is an X.509-SVID with no DNS name.
    struct LiveTrustLab: Sendable {
        static let trustDomain = "lab.test"
        static let serverID = "spiffe://lab.test/ns/demo/sa/api"

        let directory: String
        let configurationServer: LabFileServer
        let spiffeServer: LabServer
        let spiffeBundles: SPIFFETrustBundles

        static func start(_ pki: LabPKI) async throws -> LiveTrustLab {
            let directory = FileManager.default.temporaryDirectory.path.joiningPath("trust-demo-" + UUID().uuidString)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            guard let good = pki.servers["good"], let chain = pki.presentedChains["good"] else { throw StepFailure(description: "no good server") }
            let files = try await LabFileServer.start(host: LabPKI.hostName(for: "good"), chain: chain, privateKey: good.privateKey)
            // A trust domain's root, its workload CA, and the server's SVID: a URI SAN, no DNS name (X509-SVID.md §2).
            let root = try LabAuthority.spiffeRoot(trustDomain: trustDomain)
            let signing = try root.spiffeSigningCertificate(commonName: "\(trustDomain) workload CA", uris: ["spiffe://" + trustDomain])
            let svid = try signing.svid(serverID)
            let spiffe = try await LabServer.start(name: "spiffe", host: "127.0.0.1", chain: svid.chain, privateKey: svid.privateKey)
            let bundles = SPIFFETrustBundles([SPIFFEBundle(trustDomain: try SPIFFETrustDomain(parsing: trustDomain), anchors: [root.certificate])])
            return LiveTrustLab(directory: directory, configurationServer: files, spiffeServer: spiffe, spiffeBundles: bundles)
        }

        /// Removes the folder; the servers are shut down with the lab's.
        func removeFiles() {
            try? FileManager.default.removeItem(atPath: directory)
        }

        func scenarios(_ pki: LabPKI) throws -> [Scenario] {
            let intermediate = pki.intermediate.certificate.spkiPin
            let backup = try SPKIPin(digest: [UInt8](repeating: 0x42, count: 32))
            let wrong = try [SPKIPin(digest: [UInt8](repeating: 0xA1, count: 32)), SPKIPin(digest: [UInt8](repeating: 0xA2, count: 32))]
            let pinned = ConfigurationText(anchors: pki.trustedRoots, host: LabPKI.hostName(for: "good"))
            return [
                try reloadScenario(from: pinned.text(pins: wrong), to: pinned.text(pins: [intermediate, backup])),
                try rollbackScenario(pki, newer: pinned.bundle(pins: [intermediate, backup], sequence: 2), older: pinned.bundle(pins: wrong, sequence: 1)),
                try spiffeScenario(allowing: Self.serverID, policy: "SPIFFE peer (spiffe://lab.test/…)", expected: .ok),
                try spiffeScenario(
                    allowing: "spiffe://lab.test/ns/demo/sa/billing", policy: "SPIFFE peer, another ID allowed", expected: .refused(.serverCertificateUntrusted)
                ),
            ]
        }

        /// A configuration file pinning a wrong key pair, refused; rewritten to pin the lab's intermediate and
        /// reloaded; the same session's next request is trusted under generation 2.
        func reloadScenario(from first: String, to second: String) throws -> Scenario {
            let path = directory + "/trust.json"
            try PrivateFile.write(Array(first.utf8), to: path)
            let reloading = try ReloadingTrustConfiguration(contentsOf: path)
            return Scenario(
                policy: "reloaded config (pin A → B)", server: "good", expected: .ok, configure: { $0.serverTrust = reloading },
                steps: { request in
                    let before = try await request()
                    guard before.result == .refused(.serverCertificateUntrusted) else {
                        throw StepFailure(description: "generation 1 (a wrong pin) was not refused: \(before.result.text)")
                    }
                    try PrivateFile.write(Array(second.utf8), to: path)
                    reloading.reload()
                    var after = try await request()
                    if after.result == .ok { after.why = "refused under generation 1 (\(before.why)); reloaded: generation \(reloading.generation)" }
                    return after
                })
        }

        /// A signed bundle with sequence 2 installed from the configuration server, then one with sequence 1 offered
        /// and refused as a rollback: the request is trusted under the bundle in force.
        func rollbackScenario(_ pki: LabPKI, newer: [UInt8], older: [UInt8]) throws -> Scenario {
            let key = TrustConfigurationSigningKey()
            let builtIn = try ConfigurationText(anchors: pki.trustedRoots, host: String?.none).builtIn()
            let reloading = try ReloadingTrustConfiguration(configuration: builtIn)
            let server = configurationServer
            let updater = try SignedConfigurationUpdater(
                source: .init(bundleURL: server.url("trust.json")), trustedKeys: [key.publicKey], builtIn: reloading.current.configuration,
                stateFile: directory + "/accepted.json", installingInto: reloading, configuration: Self.fetching(pki))
            return Scenario(
                policy: "signed bundle replayed (seq 2 → 1)", server: "good", expected: .ok,
                configure: { $0.serverTrust = reloading },
                steps: { request in
                    try Self.publish(newer, signedWith: key, on: server)
                    let installed = await updater.refresh()
                    try Self.publish(older, signedWith: key, on: server)
                    let replayed = await updater.refresh()
                    await updater.shutdown()
                    guard case .installed(2, _, _) = installed else { throw StepFailure(description: "bundle 2 was not installed: \(installed)") }
                    guard case .rejected(let rejection) = replayed, case .rollback = rejection.detail else {
                        throw StepFailure(description: "bundle 1 was not refused as a rollback: \(replayed)")
                    }
                    guard reloading.generation == 2 else { throw StepFailure(description: "generation \(reloading.generation) in force, not 2") }
                    var outcome = try await request()
                    if outcome.result == .ok { outcome.why = "bundle 2 in force; bundle 1 refused [\(rejection.code)]: \(rejection)" }
                    return outcome
                })
        }

        /// `https://127.0.0.1:PORT/` to the SVID server, trusted by SPIFFE ID (`allowed`) against the lab trust
        /// domain's bundle; no host name is checked.
        func spiffeScenario(allowing allowed: String, policy: String, expected: Expected) throws -> Scenario {
            let evaluator = try SPIFFETrustEvaluator(bundles: spiffeBundles, allowedIDs: [try SPIFFEIDMatcher(parsing: allowed)])
            return Scenario(policy: policy, server: "spiffe", expected: expected, configure: { $0.serverTrust = evaluator })
        }

        /// The updater's own session: the configuration server pinned to the lab's intermediate, as an application
        /// pins its own configuration server.
        static func fetching(_ pki: LabPKI) throws -> TrustHTTPClientConfiguration {
            var configuration = TrustHTTPClientConfiguration()
            let pins = [pki.intermediate.certificate.spkiPin, try SPKIPin(digest: [UInt8](repeating: 0x42, count: 32))]
            configuration.serverTrust = try PublicKeysTrustEvaluator(pins: Set(pins), anchors: .only(pki.trustedRoots))
            configuration.resolve = LabPKI.loopbackResolve
            configuration.requestTimeout = .seconds(10)
            return configuration
        }

        /// Publishes a bundle and its detached signature (base64, as `trust config sign` writes it).
        static func publish(_ bundle: [UInt8], signedWith key: TrustConfigurationSigningKey, on server: LabFileServer) throws {
            server.publish(bundle, as: "trust.json")
            server.publish(Array((Data(try key.signature(for: bundle)).base64EncodedString() + "\n").utf8), as: "trust.json.sig")
        }
    }

    /// The live rows' configurations: the lab's roots as the only anchors, and pins for one host.
    struct ConfigurationText {
        var anchors: [Certificate]
        var host: String?

        /// A configuration file's text pinning `pins` for ``host`` (an entry does not inherit the base's anchors).
        func text(pins: [SPKIPin]) -> String {
            let pem = anchors.map { String(reflecting: $0.pemString) }.joined(separator: ", ")
            let anchors = #"{"pem": [\#(pem)], "replaceSystem": true}"#
            let sha256 = pins.map { "\"\($0)\"" }.joined(separator: ", ")
            let hosts = host.map { #"[{"host": "\#($0)", "anchors": \#(anchors), "pins": {"sha256": [\#(sha256)]}}]"# } ?? "[]"
            return #"{"version": 1, "base": {"anchors": \#(anchors)}, "hosts": \#(hosts)}"#
        }

        /// The configuration with no pins: the application's built-in one.
        func builtIn() throws -> TrustConfiguration {
            try TrustConfiguration.parse(text(pins: []))
        }

        /// A bundle pinning `pins`, valid for a day.
        func bundle(pins: [SPKIPin], sequence: UInt64) throws -> [UInt8] {
            let configuration = try TrustConfiguration.parse(text(pins: pins))
            return Array(
                TrustConfigurationBundle(configuration: configuration, sequence: sequence, expires: Date(timeIntervalSinceNow: 86_400)).jsonText().utf8)
        }
    }
}

import Foundation
import NIOConcurrencyHelpers
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustNIO
import TrustTestSupport

@Suite("Signed configuration updates over loopback TLS", .paced, .timeLimit(.minutes(5)))
struct SignedConfigurationUpdaterTests {
    static let key = TrustConfigurationSigningKey()
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let builtIn = TrustConfiguration()

    /// What `install` received, in order.
    final class Installed: Sendable {
        let box = NIOLockedValueBox<[TrustConfiguration]>([])
        var all: [TrustConfiguration] { box.withLockedValue { $0 } }
        func append(_ configuration: TrustConfiguration) { box.withLockedValue { $0.append(configuration) } }
    }

    /// A bundle whose configuration asks for RSA keys of at least `rsaBits` (which tells bundles apart).
    static func bundle(_ sequence: UInt64, rsaBits: Int = 3072, expires: Date = now.addingTimeInterval(86_400)) -> [UInt8] {
        var configuration = TrustConfiguration()
        configuration.base.minimumRSABits = rsaBits
        return Array(TrustConfigurationBundle(configuration: configuration, sequence: sequence, expires: expires).jsonText().utf8)
    }

    static func publish(_ bundle: [UInt8], signature: [UInt8]? = nil, on server: LabFileServer) throws {
        server.publish(bundle, as: "trust.json")
        server.publish(try signature ?? Array((Data(key.signature(for: bundle)).base64EncodedString() + "\n").utf8), as: "trust.json.sig")
    }

    /// The configuration server's session: pinned to the lab's intermediate, as an application pins its own server.
    static func sessionConfiguration(pins: [SPKIPin] = [Lab.pki.intermediate.certificate.spkiPin]) throws -> TrustHTTPClientConfiguration {
        var configuration = TrustHTTPClientConfiguration()
        configuration.serverTrust = try PublicKeysTrustEvaluator(pins: Set(pins), anchors: Lab.anchors)
        configuration.resolve = LabPKI.loopbackResolve
        configuration.requestTimeout = .seconds(30)
        return configuration
    }

    static func updater(
        _ server: LabFileServer, state: String, installed: Installed, limits: SignedConfigurationUpdater.Limits = .init(),
        configuration: TrustHTTPClientConfiguration? = nil, events: NIOLockedValueBox<[SignedConfigurationUpdater.Event]>? = nil, logger: LogCapture? = nil
    ) throws -> SignedConfigurationUpdater {
        try SignedConfigurationUpdater(
            source: .init(bundleURL: server.url("trust.json")), trustedKeys: [key.publicKey], builtIn: builtIn, stateFile: state,
            configuration: try configuration ?? sessionConfiguration(), limits: limits, logger: logger?.logger,
            onEvent: { event in events?.withLockedValue { $0.append(event) } },
            install: { configuration in installed.append(configuration) })
    }

    static func withServer<T>(_ body: (LabFileServer, String) async throws -> T) async throws -> T {
        guard let good = Lab.pki.servers["good"], let chain = Lab.pki.presentedChains["good"] else { throw CancellationError() }
        let server = try await LabFileServer.start(host: LabPKI.hostName(for: "good"), chain: chain, privateKey: good.privateKey)
        let state = try temporaryDirectory() + "/accepted.json"
        return try await withTeardown({ await server.shutdown() }) { try await body(server, state) }
    }

    @Test func aGoodBundleIsInstalledAndEachRefusalKeepsIt() async throws {
        try await Self.withServer { server, state in
            let installed = Installed()
            let events = NIOLockedValueBox<[SignedConfigurationUpdater.Event]>([])
            let log = LogCapture()
            let updater = try Self.updater(server, state: state, installed: installed, events: events, logger: log)
            try Self.publish(Self.bundle(5), on: server)
            guard case .installed(5, _, let signer) = await updater.refresh(now: Self.now) else {
                Issue.record("the good bundle was not installed")
                return
            }
            #expect(signer == Self.key.publicKey.id)
            #expect(installed.all.map(\.base.minimumRSABits) == [3072])
            #expect(await updater.refresh(now: Self.now) == .unchanged(sequence: 5))

            let next = Self.bundle(6, rsaBits: 4096)
            var flipped = try Self.key.signature(for: next)
            flipped[0] ^= 0x80
            let other = TrustConfigurationSigningKey()
            let cases: [(String, [UInt8], [UInt8]?, (TrustConfigurationRejection) -> Bool)] = [
                ("wrong signature", next, flipped, { if case .badSignature = $0.detail { true } else { false } }),
                ("wrong key", next, try other.signature(for: next), { if case .badSignature = $0.detail { true } else { false } }),
                (
                    "truncated", next, Array(try Self.key.signature(for: next).prefix(40)),
                    { if case .badSignature(let why) = $0.detail { why.contains("40 bytes") } else { false } }
                ),
                ("equal sequence", Self.bundle(5, rsaBits: 4096), nil, { $0 == .rollback(sequence: 5, lastAccepted: 5) }),
                ("lower sequence", Self.bundle(4, rsaBits: 4096), nil, { $0 == .rollback(sequence: 4, lastAccepted: 5) }),
            ]
            for (name, bundle, signature, expected) in cases {
                try Self.publish(bundle, signature: signature, on: server)
                let event = await updater.refresh(now: Self.now)
                guard case .rejected(let rejection) = event else {
                    Issue.record("\(name): \(event)")
                    continue
                }
                #expect(expected(rejection), "\(name): \(rejection)")
            }
            #expect(installed.all.map(\.base.minimumRSABits) == [3072], "the good configuration stays")
            #expect(await updater.lastAcceptedSequence == 5)
            // Each refusal was reported to the callback and logged at warning, typed.
            #expect(events.withLockedValue { $0 }.filter { if case .rejected = $0 { true } else { false } }.count == cases.count)
            #expect(log.all.filter { $0.level == .warning && $0.message.contains("refused") }.count == cases.count)

            // An expired bundle is not used: the built-in configuration is put in force, and that is said.
            let expires = Self.now.addingTimeInterval(-60)
            try Self.publish(Self.bundle(8, rsaBits: 4096, expires: expires), on: server)
            #expect(await updater.refresh(now: Self.now) == .fellBackToBuiltIn(.bundleExpired(expires: expires)))
            #expect(installed.all.map(\.base.minimumRSABits) == [3072, 2048])
            #expect(await updater.lastAcceptedSequence == 5)
            await updater.shutdown()
        }
    }

    @Test func theAcceptedSequenceSurvivesANewUpdater() async throws {
        try await Self.withServer { server, state in
            let first = try Self.updater(server, state: state, installed: Installed())
            try Self.publish(Self.bundle(9), on: server)
            #expect(
                await first.refresh(now: Self.now) == .installed(sequence: 9, expires: Self.now.addingTimeInterval(86_400), signedBy: Self.key.publicKey.id))
            await first.shutdown()
            var status = stat()
            #expect(stat(state, &status) == 0 && status.st_mode & 0o777 == 0o600, "the state file is private")

            // A restart: the rollback window stays closed, and the very bundle accepted last is accepted again.
            let installed = Installed()
            let second = try Self.updater(server, state: state, installed: installed)
            #expect(await second.lastAcceptedSequence == 9)
            #expect(
                await second.refresh(now: Self.now) == .installed(sequence: 9, expires: Self.now.addingTimeInterval(86_400), signedBy: Self.key.publicKey.id))
            try Self.publish(Self.bundle(3, rsaBits: 4096), on: server)
            #expect(await second.refresh(now: Self.now) == .rejected(.rollback(sequence: 3, lastAccepted: 9)))
            #expect(installed.all.map(\.base.minimumRSABits) == [3072])
            await second.shutdown()

            // A state file others could write is refused: starting without it would reopen the window.
            chmod(state, 0o666)
            #expect(throws: TrustConfigurationRejection.self) { try Self.updater(server, state: state, installed: Installed()) }
        }
    }

    /// Two updaters sharing one state file: the one that read the file before the other recorded a later
    /// sequence does not write a lower one over it, and refuses its bundle as the rollback it is.
    @Test func twoUpdatersOnOneStateFileNeverLowerTheSequence() async throws {
        try await Self.withServer { server, state in
            let first = try Self.updater(server, state: state, installed: Installed())
            let installed = Installed()
            let second = try Self.updater(server, state: state, installed: installed)
            try Self.publish(Self.bundle(5), on: server)
            #expect(
                await first.refresh(now: Self.now) == .installed(sequence: 5, expires: Self.now.addingTimeInterval(86_400), signedBy: Self.key.publicKey.id))
            try Self.publish(Self.bundle(3, rsaBits: 4096), on: server)
            #expect(await second.refresh(now: Self.now) == .rejected(.rollback(sequence: 3, lastAccepted: 5)))
            #expect(installed.all.isEmpty)
            #expect(await second.lastAcceptedSequence == 5)
            await first.shutdown()
            await second.shutdown()
            let third = try Self.updater(server, state: state, installed: Installed())
            #expect(await third.lastAcceptedSequence == 5, "the state file still holds the later sequence")
            await third.shutdown()
        }
    }

    @Test func theFetchIsPinnedAndBounded() async throws {
        try await Self.withServer { server, state in
            let installed = Installed()
            let small = try Self.updater(server, state: state, installed: installed, limits: .init(maximumBundleSize: 1024))
            var large = TrustConfiguration()
            large.hosts = (0..<40).map { index in
                var entry = TrustConfiguration.Entry()
                entry.host = try? HostPattern("host\(index).example.com")
                return entry
            }
            let bundle = Array(TrustConfigurationBundle(configuration: large, sequence: 1, expires: Self.now.addingTimeInterval(60)).jsonText().utf8)
            #expect(bundle.count > 1024)
            try Self.publish(bundle, on: server)
            let event = await small.refresh(now: Self.now)
            guard case .rejected(let rejection) = event, case .fetchFailed(let why) = rejection.detail else {
                Issue.record("expected the size limit to refuse it: \(event)")
                return
            }
            #expect(why.contains("too large"), "\(why)")
            await small.shutdown()

            // The configuration server's certificate is checked against the updater's own pins.
            let wrongPins = try Self.sessionConfiguration(pins: [SPKIPin(digest: [UInt8](repeating: 7, count: 32))])
            let pinned = try Self.updater(server, state: state, installed: installed, configuration: wrongPins)
            try Self.publish(Self.bundle(2), on: server)
            guard case .rejected(let rejection) = await pinned.refresh(now: Self.now), case .fetchFailed = rejection.detail else {
                Issue.record("a server outside the pins was used")
                return
            }
            await pinned.shutdown()
            #expect(installed.all.isEmpty)
        }
    }

    /// The bundle in force expires while the server is unreachable: the built-in configuration is put in force.
    @Test func anExpiredBundleInForceFallsBackWhenTheFetchFails() async throws {
        try await Self.withServer { server, state in
            let installed = Installed()
            let updater = try Self.updater(server, state: state, installed: installed)
            let expires = Self.now.addingTimeInterval(3600)
            try Self.publish(Self.bundle(4, expires: expires), on: server)
            #expect(await updater.refresh(now: Self.now) == .installed(sequence: 4, expires: expires, signedBy: Self.key.publicKey.id))
            server.publish(Array("gone".utf8), as: "trust.json.sig")
            #expect(
                await updater.refresh(now: Self.now)
                    == .rejected(
                        .badSignature(
                            reason: "the signature is 4 bytes: neither an Ed25519 signature (64 bytes, RFC 8032 §5.1.6) nor one in base64 (88 characters)")))
            #expect(await updater.refresh(now: expires) == .fellBackToBuiltIn(.bundleExpired(expires: expires)))
            #expect(installed.all.map(\.base.minimumRSABits) == [3072, 2048])
            await updater.shutdown()
        }
    }
}

import Foundation
import Logging
import MetricsTestKit
import NIOCore
import NIOSSL
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustNIO
import TrustTestSupport

@testable import TrustHTTP

/// A TrustHTTPClient (and a plain NIO verifier) over a `ReloadingTrustConfiguration`, against a lab server over loopback
/// TLS. Pins A (the intermediate + a backup) and B (the leaf + another backup) both trust the server; C (with
/// `allowLockout`) refuses it.
@Suite("Reloading trust configuration: a Session follows swaps", .paced)
struct ReloadingSessionTests {
    typealias File = LabTrustConfigurationFile

    /// Records what a session reports: decisions, configuration events.
    final class Observed: Sendable {
        let decisions = LockedState<[TrustDecision]>([])
        let changes = LockedState<[ReloadingTrustConfiguration.Event]>([])
    }

    static func lockingOut() -> String {
        File.text(File.pinsC).replacingOccurrences(of: #""pins""#, with: #""allowLockout": true, "pins""#)
    }

    func session(
        _ reloading: ReloadingTrustConfiguration, _ observed: Observed, configure: (inout TrustHTTPClientConfiguration) -> Void = { _ in }
    ) throws -> TrustHTTPClient {
        try labSession(reloading) { configuration in
            configuration.decisionObserver = { event in observed.decisions.withLock { $0.append(event.decision) } }
            configuration.trustConfigurationObserver = { event in observed.changes.withLock { $0.append(event) } }
            configure(&configuration)
        }
    }

    /// Waits (bounded, generously) until `condition` holds.
    func eventually(_ what: String, _ condition: () -> Bool) async throws {
        for _ in 0..<6000 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        #expect(condition(), "\(what)")
    }

    /// Every new connection after the swap follows B; the decision cached under A (same chain, same host) is
    /// not given out for it.
    @Test func theNextNewConnectionFollowsTheNewPins() async throws {
        let file = try File()
        defer { file.remove() }
        try file.write(File.text(File.pinsA))
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: File.psl)
        let observed = Observed()
        let session = try session(reloading, observed) { $0.maximumIdleConnectionsPerOrigin = 0 }
        let server = try await LabServer.start("good", pki: Lab.pki, protocols: .http1Only)
        try await withTeardown({
            await session.shutdown()
            try? await server.shutdown()
        }) {
            for _ in 0..<2 {
                let response = try await session.data(for: TrustHTTPClientRequest(url: url(server)))
                #expect(Set(response.serverTrust?.expectedPins ?? []) == Set(File.pinsA))
            }
            #expect(reloading.decisionWithoutSuspending(Lab.trust("good"))?.isTrusted == true)  // cached under A
            try file.write(File.text(File.pinsB))
            #expect(reloading.reload().generation != nil)
            let after = try await session.data(for: TrustHTTPClientRequest(url: url(server)))
            #expect(after.statusCode == 200 && Set(after.serverTrust?.expectedPins ?? []) == Set(File.pinsB))
            #expect(observed.decisions.withLock { $0.map { Set($0.expectedPins) } } == [Set(File.pinsA), Set(File.pinsA), Set(File.pinsB)])
            #expect(observed.changes.withLock { $0.map(\.generation) } == [2])
        }
    }

    /// A malformed file, an expired pin set and a lockout are refused with their reasons, logged, counted and
    /// observed; the session goes on under the last good configuration.
    @Test func refusalsAreReportedAndTheLastGoodConfigurationStays() async throws {
        let file = try File()
        defer { file.remove() }
        try file.write(File.text(File.pinsA))
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: File.psl)
        let observed = Observed()
        let log = LogCapture()
        let metrics = TestMetrics()
        let session = try session(reloading, observed) { configuration in
            configuration.logger = log.logger
            configuration.metricsFactory = metrics
        }
        let server = try await LabServer.start("good", pki: Lab.pki)
        try await withTeardown({
            await session.shutdown()
            try? await server.shutdown()
        }) {
            #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server))).statusCode == 200)
            let refused = ["{", File.text(File.pinsB, extra: #", "expires": "2020-01-01T00:00:00Z""#), File.text(File.pinsC)]
            for text in refused {
                try file.write(text)
                #expect(reloading.reload().rejection != nil)
                #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server))).statusCode == 200)
            }
            try file.write(File.text(File.pinsB))
            #expect(reloading.reload().generation != nil)
            let codes = observed.changes.withLock { events in
                events.map {
                    switch $0 {
                    case .reloaded(let generation, _): return "swapped \(generation)"
                    case .rejected(let rejection): return rejection.code
                    }
                }
            }
            #expect(codes == ["malformed", "pins-expired", "would-lock-out", "swapped 2"])
            #expect(
                log.messages("trust configuration rejected; the one in force stays").map { $0.metadata["trust.rejection"] } == [
                    "malformed", "pins-expired", "would-lock-out",
                ])
            #expect(log.messages("trust configuration swapped").first?.metadata["trust.generation"] == "2")
            let counter = try metrics.expectCounter("swift_trust_configuration_changes_total", [("result", "rejected"), ("reason", "would-lock-out")])
            #expect(counter.totalValue == 1)
            #expect(try metrics.expectCounter("swift_trust_configuration_changes_total", [("result", "swapped"), ("reason", "none")]).totalValue == 1)
        }
    }

    /// Every swap retires the connections made before it: the idle one closes at once, a request that starts
    /// after the swap gets a new connection (even under pins that still trust the server), and a request in flight
    /// finishes (its whole body) before its connection closes; under pins that refuse the server the next
    /// connection is refused.
    @Test func aSwapRetiresPooledConnectionsAndInFlightRequestsFinish() async throws {
        let file = try File()
        defer { file.remove() }
        try file.write(File.text(File.pinsA))
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: File.psl)
        let session = try session(reloading, Observed())
        let watcher = try #require(session.trustWatcher)
        let server = try await LabServer.start("good", pki: Lab.pki, protocols: .http1Only)
        try await withTeardown({
            await session.shutdown()
            try? await server.shutdown()
        }) {
            #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server))).statusCode == 200)
            try file.write(File.text(File.pinsB))
            #expect(reloading.reload().rejection == nil)
            #expect(watcher.checked == (passes: 1, distrusted: 1))
            try await eventually("the idle connection made under A closed") { session.openConnectionCount == 0 }
            #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server))).statusCode == 200)
            #expect(server.acceptedConnectionCount == 2)
            // In flight: an upload whose body is held back holds its connection; another request makes a second one.
            let (chunks, feed) = AsyncStream.makeStream(of: Data.self)
            let (started, sending) = AsyncStream.makeStream(of: Void.self)
            var upload = TrustHTTPClientRequest(url: url(server, "/upload"))
            upload.method = "POST"
            upload.body = .stream(length: 4) {
                sending.yield()
                return chunks
            }
            let inFlight = Task { try await session.data(for: upload) }
            for await _ in started { break }
            #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server))).statusCode == 200)
            #expect(session.openConnectionCount == 2)
            try file.write(Self.lockingOut())
            #expect(reloading.reload().rejection == nil)
            #expect(watcher.checked == (passes: 2, distrusted: 3))
            try await eventually("the idle connection closed") { session.openConnectionCount == 1 }
            feed.yield(Data("done".utf8))
            feed.finish()
            #expect(try await inFlight.value.statusCode == 200)
            try await eventually("the connection in flight closed after its request") { session.openConnectionCount == 0 }
            let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(server))) }
            #expect(error?.trustDecision?.codes.contains("pin-mismatch") == true, "\(String(describing: error))")
        }
    }

    /// A configuration whose entry asks for TLS 1.3 and names a client identity: after the swap, the next request
    /// to a TLS 1.2 server is refused (its pooled connection, made before, is not used), and a server that requires
    /// a client certificate gets the identity the new configuration names.
    @Test func aSwapReachesTheTLSMinimumAndTheClientIdentity() async throws {
        let lab = CLI.lab
        let anchors = #"{"certificates": ["roots.pem"], "replaceSystem": true}"#
        func configuration(_ hosts: String) throws -> TrustConfiguration {
            try TrustConfiguration.parse(
                #"{"version": 1, "base": {"anchors": \#(anchors)}, "hosts": [\#(hosts)]}"#, publicSuffixes: File.psl)
        }
        let reloading = try ReloadingTrustConfiguration(
            configuration: try configuration(#"{"host": "*.good.lab.test", "anchors": \#(anchors)}"#), baseDirectory: lab, publicSuffixes: File.psl)
        let session = try session(reloading, Observed())
        let good = Lab.pki.servers["good"]
        let tls12 = try await LabServer.start(
            name: "old", host: "good.lab.test", chain: try #require(good).chain, privateKey: try #require(good).privateKey, maximumTLSVersion: .tlsv12)
        let mtls = try await LabServer.start(mutualTLS: .required, pki: Lab.pki)
        try await withTeardown({
            await session.shutdown()
            for server in [tls12, mtls] { try? await server.shutdown() }
        }) {
            #expect(try await session.data(for: TrustHTTPClientRequest(url: url(tls12, "/"))).statusCode == 200)
            #expect(await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(mtls, "/whoami"))) } != nil)
            try reloading.apply(
                try configuration(
                    #"{"host": "good.lab.test", "minimumTLSVersion": "1.3", "anchors": \#(anchors)}, "#
                        + #"{"host": "*.good.lab.test", "anchors": \#(anchors), "#
                        + #""clientIdentity": {"certificate": "clients/client/chain.pem", "key": "clients/client/key.pem"}}"#))
            let refused = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(tls12, "/"))) }
            #expect(refused?.message.contains("TLS 1.3") == true, "\(String(describing: refused))")
            #expect(try await session.data(for: TrustHTTPClientRequest(url: url(mtls, "/whoami"))).text.contains("lab client"))
        }
    }

    /// A route is made again after a swap, under the new generation: its pool key differs from the one before.
    @Test func routesFollowTheGeneration() async throws {
        let file = try File()
        defer { file.remove() }
        try file.write(File.text(File.pinsA))
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: File.psl)
        let session = try session(reloading, Observed())
        let target = try #require(URL(string: "https://good.lab.test:8443/"))
        let origin = try #require(Origin(target))
        let before = session.router.route(for: origin)
        #expect(before.generation == 1 && session.router.route(for: origin) === before)
        try file.write(File.text(File.pinsB))
        #expect(reloading.reload().rejection == nil)
        let after = session.router.route(for: origin)
        #expect(after.generation == 2 && after.identitiesGeneration == 2 && after.key != before.key)
        await session.shutdown()
    }

    /// 200 requests at once, the configuration swapped from A to B after the first 50 have ended: every request
    /// ends trusted, under A or under B, never neither; both are seen.
    @Test func aSwapUnder200ConcurrentRequestsLosesNone() async throws {
        let file = try File()
        defer { file.remove() }
        try file.write(File.text(File.pinsA))
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: File.psl)
        let session = try session(reloading, Observed()) { configuration in
            configuration.maximumIdleConnectionsPerOrigin = 2
            configuration.maximumConnectionsPerOrigin = 8
            configuration.requestTimeout = .seconds(120)
        }
        let server = try await LabServer.start("good", pki: Lab.pki, protocols: .http1Only)
        let (pinsA, pinsB) = (Set(File.pinsA), Set(File.pinsB))
        let ended = LockedState(0)
        try await withTeardown({
            await session.shutdown()
            try? await server.shutdown()
        }) {
            let outcomes = await withTaskGroup(of: String.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        do {
                            // Some on connections of their own, so that handshakes go on before and after the swap.
                            var request = TrustHTTPClientRequest(url: url(server, index.isMultiple(of: 2) ? "/" : "/close"))
                            request.timeout = .seconds(120)
                            let response = try await session.data(for: request)
                            if ended.withLock({
                                $0 += 1
                                return $0
                            }) == 50 {
                                _ = try? reloading.apply(try reloadedB())
                            }
                            let pins = Set(response.serverTrust?.expectedPins ?? [])
                            guard response.statusCode == 200, response.serverTrust?.isTrusted == true else { return "untrusted" }
                            return pins == pinsA ? "A" : pins == pinsB ? "B" : "neither"
                        } catch {
                            return "failed: \(error)"
                        }
                    }
                }
                var counts: [String: Int] = [:]
                for await outcome in group { counts[outcome, default: 0] += 1 }
                return counts
            }
            #expect(reloading.generation == 2)
            #expect((outcomes["A"] ?? 0) + (outcomes["B"] ?? 0) == 200, "\(outcomes)")
            #expect((outcomes["A"] ?? 0) >= 50 && (outcomes["B"] ?? 0) >= 1, "\(outcomes)")
        }

        func reloadedB() throws -> TrustConfiguration {
            try TrustConfiguration.parse(File.text(File.pinsB), publicSuffixes: File.psl)
        }
    }

    /// A plain NIO client's `ServerTrustVerifier` over the reloading configuration follows its swaps.
    @Test func aPlainNIOVerifierFollowsTheSwap() async throws {
        let file = try File()
        defer { file.remove() }
        try file.write(File.text(File.pinsA))
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: File.psl)
        let verifier = ServerTrustVerifier(evaluator: reloading)
        let context = try NIOSSLContext(configuration: .trustClient(applicationProtocols: ["http/1.1"]))
        let server = try await LabServer.start("good", pki: Lab.pki, protocols: .http1Only)
        try await withTeardown({ try? await server.shutdown() }) {
            let underA = TrustRecord()
            let channel = try await TLSHandshake.connect(port: server.port) {
                try verifier.makeClientHandler(context: context, host: "good.lab.test", record: underA)
            }
            try await channel.close()
            #expect(underA.decision?.isTrusted == true && Set(underA.decision?.expectedPins ?? []) == Set(File.pinsA))
            try file.write(Self.lockingOut())
            #expect(reloading.reload().rejection == nil)
            let underC = TrustRecord()
            await #expect(throws: (any Error).self) {
                let channel = try await TLSHandshake.connect(port: server.port) {
                    try verifier.makeClientHandler(context: context, host: "good.lab.test", record: underC)
                }
                try await channel.close()
            }
            #expect(underC.decision?.codes.contains("pin-mismatch") == true)
        }
    }
}

import Foundation
import Logging
import MetricsTestKit
import NIOConcurrencyHelpers
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

@testable import TrustNIO

/// What a session logs, counts and reports to its observer: exact levels, metadata keys and metric
/// names for the events users alert on, and never a secret.
@Suite("Telemetry: swift-log, swift-metrics, the decision observer", .serialized, .timeLimit(.minutes(5)), .paced)
struct TelemetryTests {
    static let password = "Tele-metry-S3cret!"

    struct Observed: Sendable {
        let log = LogCapture()
        let metrics = TestMetrics()
        let events = NIOLockedValueBox<[TrustDecisionEvent]>([])

        func configure(_ configuration: inout TrustHTTPClientConfiguration) {
            configuration.logger = log.logger
            configuration.metricsFactory = metrics
            let events = self.events
            configuration.decisionObserver = { event in events.withLockedValue { $0.append(event) } }
        }

        /// No captured line carries the password, the Authorization value or URL user-info.
        func expectNoSecret(_ secrets: [String], sourceLocation: SourceLocation = #_sourceLocation) {
            for record in log.all {
                for secret in secrets { #expect(!record.text.contains(secret), "\(record.text)", sourceLocation: sourceLocation) }
            }
        }
    }

    @Test func trustedAndCachedDecisions() async throws {
        let observed = Observed()
        // HTTP/1.1 and no idle connection kept: each request opens a connection, and evaluates or hits the cache.
        try await withLabServers(["good"], protocols: .http1Only) { servers in
            let session = try labSession {
                observed.configure(&$0)
                $0.maximumIdleConnectionsPerOrigin = 0
            }
            for _ in 0..<2 { #expect(try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!))).statusCode == 200) }
            await session.shutdown()
        }
        let trusted = observed.log.messages("server trusted")
        #expect(trusted.count == 2 && trusted.allSatisfy { $0.level == .debug })
        #expect(
            Set(trusted.first?.metadata.keys ?? [:].keys) == ["trust.host", "trust.port", "trust.policy", "trust.decision", "trust.cached", "trust.pins_seen"])
        #expect(trusted.map { $0.metadata["trust.cached"]?.description } == ["false", "true"])  // the second connection: a cache hit
        #expect(observed.log.messages("connected").count == 2)
        #expect(try observed.metrics.expectCounter("swift_trust_decisions_total", [("outcome", "trusted"), ("reason", "none")]).totalValue == 2)
        #expect(try observed.metrics.expectCounter("swift_trust_cache_lookups_total", [("result", "hit")]).totalValue == 1)
        #expect(try observed.metrics.expectCounter("swift_trust_cache_lookups_total", [("result", "miss")]).totalValue == 1)
        #expect(try observed.metrics.expectTimer("swift_trust_evaluation_duration", [("cached", "false")]).values.count == 1)
        #expect(try observed.metrics.expectTimer("swift_trust_connection_duration", [("scheme", "https"), ("result", "ok")]).values.count == 2)
        let events = observed.events.withLockedValue { $0 }
        #expect(
            events.map(\.cached) == [false, true] && events.allSatisfy { $0.host == "good.lab.test" && $0.decision.isTrusted && $0.presentedChain.count == 2 })
    }

    /// A challenge handler that trusts a chain default handling refuses (`useCredential`): the logs, the metrics
    /// and the observer see the decision the handshake used — the handler's, marked as its — with the refused
    /// one (and its reasons) inside it.
    @Test func handlerOverrideIsTheDecisionRecorded() async throws {
        let observed = Observed()
        try await withLabServers(["self-signed"]) { servers in
            let session = try labSession { observed.configure(&$0) }
            let trusting = ClosureChallengeHandler { challenge in
                guard let trust = challenge.serverTrust else { return .performDefaultHandling }
                return .useCredential(Credential(trust: trust))
            }
            #expect(try await session.data(for: TrustHTTPClientRequest(url: url(servers["self-signed"]!), challengeHandler: trusting)).statusCode == 200)
            await session.shutdown()
        }
        let events = observed.events.withLockedValue { $0 }
        try #require(events.count == 1)
        let decision = events[0].decision
        #expect(decision.isTrusted && decision.reasons.isEmpty)
        #expect(decision.policy == .challengeHandler(acceptedWithCredential: true) && decision.policy.description == "challenge handler (useCredential)")
        let override = try #require(decision.override)
        #expect(override.origin == .challengeHandler)
        #expect(!override.replaced.isTrusted && override.replaced.reasons.contains { $0.code == "self-signed-leaf" || $0.code == "no-path-to-trusted-anchor" })
        #expect(decision.evaluatorDecision.reasons == override.replaced.reasons)
        let trusted = observed.log.messages("server trusted")
        #expect(trusted.count == 1 && observed.log.messages("server not trusted").isEmpty)
        #expect(trusted.first?.metadata["trust.override"]?.description == "challenge-handler")
        #expect(trusted.first?.metadata["trust.override_reasons"]?.description.isEmpty == false)
        #expect(try observed.metrics.expectCounter("swift_trust_decisions_total", [("outcome", "trusted"), ("reason", "none")]).totalValue == 1)
        #expect(observed.metrics.counterTotal(label: "swift_trust_decisions_total") == 1)
    }

    /// A challenge handler that cancels the challenge for a chain default handling trusts: the observer sees the
    /// handler's refusal, which has no validated path (the trusted decision it replaced keeps its own), and the
    /// request's error carries it (a trust refusal by the application, not a cancelled request).
    @Test func handlerRefusalOfATrustedChainHasNoValidatedPath() async throws {
        let observed = Observed()
        let error = try await withLabServers(["good"]) { servers in
            let session = try labSession { observed.configure(&$0) }
            let refusing = ClosureChallengeHandler { challenge in
                challenge.serverTrust == nil ? .performDefaultHandling : .cancelAuthenticationChallenge
            }
            let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!), challengeHandler: refusing)) }
            await session.shutdown()
            return error
        }
        #expect(error?.code == .cancelled && error?.trustDecision?.isTrusted == false, "\(String(describing: error))")
        let events = observed.events.withLockedValue { $0 }
        try #require(events.count == 1)
        let decision = events[0].decision
        #expect(!decision.isTrusted && decision.validatedPath.isEmpty)
        #expect(decision.pinsSeen.count == decision.closestPath.count && !decision.closestPath.isEmpty)
        #expect(DecisionText.pathLine(decision).hasPrefix("validated path: none"), "\(DecisionText.pathLine(decision))")
        let override = try #require(decision.override)
        #expect(override.origin == .challengeHandler && override.replaced.isTrusted && !override.replaced.validatedPath.isEmpty)
        #expect(decision.closestPath == override.replaced.validatedPath)
    }

    @Test func pinMismatchAndExpiredAreRefusals() async throws {
        let observed = Observed()
        let wrongPin = try SPKIPin(parsing: "sha256/" + Data(repeating: 7, count: 32).base64EncodedString())
        try await withLabServers(["good", "expired"]) { servers in
            let pinned = try labSession(try PublicKeysTrustEvaluator(pins: [wrongPin], anchors: Lab.anchors)) { observed.configure(&$0) }
            #expect(await sessionError { try await pinned.data(for: TrustHTTPClientRequest(url: url(servers["good"]!))) }?.code == .serverCertificateUntrusted)
            await pinned.shutdown()
            let plain = try labSession { observed.configure(&$0) }
            _ = await sessionError { try await plain.data(for: TrustHTTPClientRequest(url: url(servers["expired"]!))) }
            await plain.shutdown()
        }
        let refused = observed.log.messages("server not trusted")
        let pin = try #require(refused.first { $0.metadata["trust.reasons"]?.description.contains("pin-mismatch") == true })
        #expect(pin.level == .warning)
        #expect(pin.metadata["trust.pins_expected"]?.description.contains(wrongPin.description) == true)
        let expired = try #require(refused.first { $0.metadata["trust.reasons"]?.description.contains("expired") == true })
        #expect(expired.level == .notice && expired.metadata["trust.decision"]?.description == "refused")
        #expect(try observed.metrics.expectCounter("swift_trust_decisions_total", [("outcome", "refused"), ("reason", "pin-mismatch")]).totalValue == 1)
        #expect(try observed.metrics.expectCounter("swift_trust_decisions_total", [("outcome", "refused"), ("reason", "expired")]).totalValue == 1)
        let failures = observed.log.messages("request failed")
        #expect(failures.count == 2 && failures.allSatisfy { $0.level == .notice })
        #expect(Set(failures.compactMap { $0.metadata["error.code"]?.description }) == ["serverCertificateUntrusted", "serverCertificateHasBadDate"])
        #expect(observed.metrics.counterTotal(label: "swift_trust_request_failures_total") == 2)
    }

    @Test func clientCertificateRefused() async throws {
        let observed = Observed()
        let server = try await LabServer.start(mutualTLS: .required, pki: Lab.pki)
        let session = try labSession { observed.configure(&$0) }
        let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(server, "/whoami"))) }
        await session.shutdown()
        try await server.shutdown()
        let code = try #require(error?.code)
        #expect(code == .clientCertificateRequired || code == .clientCertificateRejected)
        let line = try #require(observed.log.messages("client certificate refused").first)
        #expect(line.level == .notice && line.metadata["error.code"]?.description == "\(code)" && line.metadata["http.host"] != nil)
        #expect(try observed.metrics.expectCounter("swift_trust_request_failures_total", [("code", "\(code)")]).totalValue == 1)
    }

    @Test func digestRefusedWithoutSecrets() async throws {
        let observed = Observed()
        try await withLabServers(["good"]) { servers in
            let session = try labSession { observed.configure(&$0) }
            var request = TrustHTTPClientRequest(url: url(servers["good"]!, "/digest?algorithm=SHA-256"))
            request.credential = Credential(user: "alice", password: Self.password, persistence: .none)
            #expect(try await session.data(for: request).statusCode == 401)
            // The URL's own user-info too: never in a line.
            let withUserInfo = URL(
                string: servers["good"]!.baseURL.replacingOccurrences(of: "https://", with: "https://alice:\(Self.password)@") + "/digest?algorithm=SHA-256")!
            #expect(try await session.data(for: TrustHTTPClientRequest(url: withUserInfo)).statusCode == 401)
            await session.shutdown()
        }
        let lines = observed.log.messages("HTTP authentication failed")
        #expect(lines.count == 2)
        let line = try #require(lines.first)
        #expect(line.level == .notice)
        #expect(Set(line.metadata.keys) == ["http.host", "http.port", "auth.scheme", "auth.realm", "auth.proxy", "auth.failures"])
        #expect(line.metadata["auth.scheme"]?.description == "digest" && line.metadata["auth.failures"]?.description == "1")
        #expect(
            try observed.metrics.expectCounter("swift_trust_http_authentication_failures_total", [("scheme", "digest"), ("proxy", "false")]).totalValue == 2)
        observed.expectNoSecret([Self.password, "alice:"])
        #expect(!observed.log.all.contains { $0.text.lowercased().contains("authorization") || $0.text.contains("response=") })
    }

    @Test func reportSentAndDropped() async throws {
        let observed = Observed()
        let good = try await LabServer.start("good", pki: Lab.pki)
        let collector = try await LabServer.start("good", pki: Lab.pki)
        let root = Lab.pki.root.certificate.pemString
        let otherPin = "sha256/" + Data(repeating: 1, count: 32).base64EncodedString()
        let text =
            #"{"version": 1, "hosts": [{"host": "good.lab.test", "anchors": {"pem": [\#(String(reflecting: root))], "replaceSystem": true}, "mode": "report-only", "pins": {"sha256": ["\#(otherPin)"]}, "reportURIs": ["https://good.lab.test:\#(collector.port)/reports"]}]}"#
        let evaluator = try ConfiguredTrustEvaluator(configuration: try TrustConfiguration.parse(text, publicSuffixes: nil))
        var reporting = TrustHTTPClientConfiguration()
        reporting.serverTrust = DefaultTrustEvaluator(anchors: Lab.anchors)
        reporting.resolve = LabPKI.loopbackResolve
        let reporter = PinFailureReporter(configuration: reporting)
        for _ in 0..<2 {
            let session = try labSession(evaluator, reporter: reporter) {
                observed.configure(&$0)
                $0.evaluationCache = nil
            }
            #expect(try await session.data(for: TrustHTTPClientRequest(url: url(good))).statusCode == 200)
            await session.shutdown()
        }
        await reporter.flush()
        try await good.shutdown()
        try await collector.shutdown()
        #expect(observed.log.messages("pin failure report sent").map(\.level) == [.info])
        #expect(observed.log.messages("pin failure report dropped (a duplicate)").count == 1)
        #expect(try observed.metrics.expectCounter("swift_trust_reports_total", [("result", "sent")]).totalValue == 1)
        #expect(try observed.metrics.expectCounter("swift_trust_reports_total", [("result", "dropped")]).totalValue == 1)
        #expect(
            observed.log.messages("pin failure report sent").first?.metadata["report.endpoints"]?.description.contains("good.lab.test:\(collector.port)")
                == true)
    }

    /// A mutual-TLS server's verification log: a verified client at debug, a refused one at notice with its reasons.
    @Test func clientAuthenticationLogs() async throws {
        let log = LogCapture()
        let authentication = ClientAuthentication(anchors: [Lab.pki.root.certificate])
        for name in ["client", "client-foreign"] {
            let identity = try #require(Lab.pki.clients[name])
            let decision = await authentication.validator.evaluate(ServerTrust(presentedChain: identity.chain, peerName: nil))
            ClientAuthentication.log(decision, to: log.logger)
        }
        #expect(log.all.map(\.message) == ["client certificate verified", "client certificate refused"])
        #expect(log.all.map(\.level) == [.debug, .notice])
        #expect(Set(log.all[0].metadata.keys) == ["client.subject", "client.pin"])
        #expect(log.all[1].metadata["client.reasons"]?.description.contains("no-path-to-trusted-anchor") == true, "\(log.all[1].metadata)")
    }
}

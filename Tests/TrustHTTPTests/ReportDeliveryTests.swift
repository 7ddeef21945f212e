import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Pin-failure report delivery: concurrent, bounded in URIs and time, and never ahead of the error it is about.
/// The endpoints (``StalledEndpoint``) accept connections and never answer (the stall a report URI can do to its client).
@Suite("Pin-failure report delivery", .serialized, .timeLimit(.minutes(3)), .paced)
struct ReportDeliveryTests {
    /// A report (RFC 7469 §3's fields) about good.lab.test on `port`.
    static func report(port: Int = 443) throws -> PinFailureReport {
        let json = """
            {"date-time": "2026-01-01T00:00:00Z", "hostname": "good.lab.test", "port": \(port), "noted-hostname": "good.lab.test",
             "include-subdomains": false, "enforce-mode": true, "served-certificate-chain": [], "validated-certificate-chain": [],
             "known-pins": [], "validation-result": "pin-validation-failed"}
            """
        return try JSONDecoder().decode(PinFailureReport.self, from: Data(json.utf8))
    }

    /// Polls `condition` every 20 ms for up to `seconds`.
    static func eventually(_ seconds: Double = 30, _ condition: () -> Bool) async -> Bool {
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < end {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    /// Two stalled URIs: the second is asked while the first still stalls (before, it was asked only once the first
    /// had timed out, 10 s later); flush() returns once the delivery timeout has passed, both given up (before: 2 ×
    /// the request timeout); URIs beyond ``PinFailureReporter/Limits/maximumURIs`` are not sent to. The delivery
    /// timeout (10 s) leaves a loaded machine that long to make the second connection while the first stalls.
    @Test func concurrentAndBounded() async throws {
        let endpoints = try (0..<3).map { _ in try StalledEndpoint() }
        defer { for endpoint in endpoints { endpoint.close() } }
        let reporter = PinFailureReporter(limits: PinFailureReporter.Limits(maximumURIs: 2, deliveryTimeout: .seconds(10)))
        #expect(reporter.submit(try Self.report(), to: endpoints.map { $0.url() }))
        // Concurrent: both of the first two are connected to, and neither has been given up yet.
        #expect(await Self.eventually { endpoints[0].connections == 1 && endpoints[1].connections == 1 })
        #expect(endpoints[0].closed == 0 && endpoints[1].closed == 0, "the first URI was given up before the second was asked")
        // Bounded: flush returns although neither endpoint ever answers, and the client has let go of both.
        await reporter.flush()
        #expect(await Self.eventually(30) { endpoints[0].closed == 1 && endpoints[1].closed == 1 })
        #expect(endpoints[2].connections == 0, "a URI beyond maximumURIs was sent to")
    }

    /// At most ``PinFailureReporter/Limits/maximumInFlight`` reports at a time: one more is dropped (submit says
    /// so), not queued behind the stalled ones.
    @Test func reportsBeyondTheInFlightLimitAreDropped() async throws {
        let endpoint = try StalledEndpoint()
        defer { endpoint.close() }
        let reporter = PinFailureReporter(limits: PinFailureReporter.Limits(deliveryTimeout: .seconds(2), maximumInFlight: 2))
        #expect(reporter.submit(try Self.report(port: 1), to: [endpoint.url()]))
        #expect(reporter.submit(try Self.report(port: 2), to: [endpoint.url()]))
        #expect(!reporter.submit(try Self.report(port: 3), to: [endpoint.url()]))
        await reporter.flush()
        #expect(reporter.submit(try Self.report(port: 4), to: [endpoint.url()]))  // room again once delivered (or given up)
        await reporter.flush()
    }

    /// `trust get --config` refused by a pin, with two stalled report URIs: the refusal is on stderr while both
    /// reports are still in flight (neither given up), and the command exits once their delivery timeout has
    /// passed — both reports were attempted. Before, the error came only after the reports had been waited for one
    /// after the other (10 s each, then more): the refusal line appeared after every report connection had closed.
    @Test func refusedGetTellsItsErrorBeforeTheReportsEnd() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let endpoints = try (0..<2).map { _ in try StalledEndpoint() }
        let dir = try temporaryDirectory()
        defer {
            for endpoint in endpoints { endpoint.close() }
            try? FileManager.default.removeItem(atPath: dir)
        }
        let pins = [9, 8].map { "\"sha256/" + Data(repeating: UInt8($0), count: 32).base64EncodedString() + "\"" }.joined(separator: ", ")
        let reports = endpoints.map { "\"\($0.url().absoluteString)\"" }.joined(separator: ", ")
        let config = dir + "/trust.json"
        try """
        {"version": 1, "hosts": [{"host": "good.lab.test", "mode": "enforce", "pins": {"sha256": [\(pins)]}, "reportURIs": [\(reports)],
          "anchors": {"certificates": ["\(CLI.lab)/roots.pem"], "replaceSystem": true}}]}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let child = try SpawnedCommand(
            CLI.binary,
            [
                "get", server.baseURL + "/", "--resolve", "good.lab.test:\(server.port):127.0.0.1", "-o", "/dev/null", "-s", "-S", "--config", config,
            ], stdout: "/dev/null", stderr: dir + "/err")
        let started = ContinuousClock.now
        let told = await Self.eventually(60) { ((try? String(contentsOfFile: dir + "/err", encoding: .utf8)) ?? "").contains("pin") }
        let givenUpWhenTold = endpoints.map(\.closed).reduce(0, +)
        let (status, _, _) = await child.wait(limit: 60)
        let elapsed = ContinuousClock.now - started
        try await server.shutdown()
        #expect(told)
        #expect(givenUpWhenTold == 0, "\(givenUpWhenTold) report deliveries had ended before the refusal was printed")
        #expect(status == 60)
        #expect(endpoints.allSatisfy { $0.connections == 1 }, "both report URIs are sent to: \(endpoints.map(\.connections))")
        // The order above is the check. The default delivery timeout (5 s) bounds the wait: a generous bound, 3.6
        // times it, still under the 20 s and more that two stalled URIs took one after the other before.
        #expect(elapsed < .seconds(18), "\(elapsed)")
    }

    /// A report dropped because ``PinFailureReporter/Limits/maximumInFlight`` reports were being delivered is not
    /// remembered: submitted again once there is room, it is sent (before, it had been recorded as sent and was
    /// suppressed for 24 hours). Each outcome is told apart.
    @Test func reportDroppedInFlightIsNotSuppressedLater() async throws {
        let endpoint = try StalledEndpoint()
        defer { endpoint.close() }
        let reporter = PinFailureReporter(limits: PinFailureReporter.Limits(deliveryTimeout: .seconds(2), maximumInFlight: 1))
        #expect(reporter.enqueue(try Self.report(port: 1), to: [endpoint.url()]) == .queued)
        #expect(reporter.enqueue(try Self.report(port: 2), to: [endpoint.url()]) == .tooManyInFlight)
        #expect(reporter.enqueue(try Self.report(port: 1), to: [endpoint.url()]) == .duplicate)
        #expect(reporter.enqueue(try Self.report(port: 3), to: []) == .noURI)
        await reporter.flush()
        #expect(reporter.enqueue(try Self.report(port: 2), to: [endpoint.url()]) == .queued, "the report dropped for the in-flight limit was suppressed")
        #expect(reporter.enqueue(try Self.report(port: 2), to: [endpoint.url()]) == .duplicate)
        await reporter.flush()
    }

    /// A session's log gives the real reason a report was dropped: `(too many in flight)`, not `(a duplicate)`; the
    /// same report, evaluated again once the first delivery has ended, is sent.
    @Test func sessionLogsWhyAReportWasDropped() async throws {
        let endpoint = try StalledEndpoint()
        let first = try await LabServer.start("good", pki: Lab.pki)
        let second = try await LabServer.start("good", pki: Lab.pki)
        let root = Lab.pki.root.certificate.pemString
        let otherPin = "sha256/" + Data(repeating: 1, count: 32).base64EncodedString()
        let text =
            #"{"version": 1, "hosts": [{"host": "good.lab.test", "anchors": {"pem": [\#(String(reflecting: root))], "replaceSystem": true}, "mode": "report-only", "pins": {"sha256": ["\#(otherPin)"]}, "reportURIs": ["\#(endpoint.url().absoluteString)"]}]}"#
        let evaluator = try ConfiguredTrustEvaluator(configuration: try TrustConfiguration.parse(text, publicSuffixes: nil))
        // The first report stalls for up to 30 s (a generous bound for the second request to come meanwhile).
        let reporter = PinFailureReporter(limits: PinFailureReporter.Limits(deliveryTimeout: .seconds(30), maximumInFlight: 1))
        let log = LogCapture()
        /// A request to `server` in a session of its own (a new connection, evaluated afresh).
        func get(_ server: LabServer) async throws -> Int {
            let session = try labSession(evaluator, reporter: reporter) {
                $0.logger = log.logger
                $0.evaluationCache = nil
            }
            let status = try await session.data(for: TrustHTTPClientRequest(url: url(server))).statusCode
            await session.shutdown()
            return status
        }
        #expect(try await get(first) == 200)
        #expect(await Self.eventually { endpoint.connections == 1 })
        #expect(try await get(second) == 200)
        // The stalled endpoint closes: the first delivery ends, and the second server's report goes out now.
        endpoint.close()
        await reporter.flush()
        #expect(try await get(second) == 200)
        await reporter.flush()
        try await first.shutdown()
        try await second.shutdown()
        let reports = log.all.map(\.message).filter { $0.hasPrefix("pin failure report") }
        #expect(reports == ["pin failure report sent", "pin failure report dropped (too many in flight)", "pin failure report sent"])
    }

    /// Ctrl-C while `trust get` waits for its pin-failure reports, its error told: the command ends at once with
    /// curl's 130 (before, the signal waited behind the reports and the command exited 60 once they were given up).
    @Test func interruptWhileReportsAreFlushedExits130() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let endpoint = try StalledEndpoint()
        let dir = try temporaryDirectory()
        defer {
            endpoint.close()
            try? FileManager.default.removeItem(atPath: dir)
        }
        let pins = [9, 8].map { "\"sha256/" + Data(repeating: UInt8($0), count: 32).base64EncodedString() + "\"" }.joined(separator: ", ")
        let config = dir + "/trust.json"
        try """
        {"version": 1, "hosts": [{"host": "good.lab.test", "mode": "enforce", "pins": {"sha256": [\(pins)]},
          "reportURIs": ["\(endpoint.url().absoluteString)"], "anchors": {"certificates": ["\(CLI.lab)/roots.pem"], "replaceSystem": true}}]}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let child = try SpawnedCommand(
            CLI.binary,
            [
                "get", server.baseURL + "/", "--resolve", "good.lab.test:\(server.port):127.0.0.1", "-o", "/dev/null", "-s", "-S", "--config", config,
            ], stdout: "/dev/null", stderr: dir + "/err")
        let told = await Self.eventually(60) { child.stderrText.contains("pin") }
        // The report is under way (its endpoint connected to, never answering): the command is waiting for it.
        let reporting = await Self.eventually(30) { endpoint.connections == 1 }
        kill(child.pid, SIGINT)
        let (status, killedBy, _) = await child.wait(limit: 60)
        try await server.shutdown()
        #expect(told && reporting)
        #expect(status == 130 && killedBy == nil, "exit \(String(describing: status)), signal \(String(describing: killedBy)): \(child.stderrText)")
    }
}

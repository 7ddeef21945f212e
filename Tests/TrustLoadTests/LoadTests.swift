import Foundation
import Testing
import TrustTestSupport

/// A test that measures memory or time measures it in a child process of its own, never the shared
/// test process: each load runs in `trust-dev load-check` (a lab server and a `TrustHTTPClient` in that child,
/// nothing else) and is judged here on the figures it prints. The same run carries every functional
/// check too, so the load is not sent twice.
@Suite("Load: many requests over many connections, no failure, no growth", .serialized, .timeLimit(.minutes(5)), .paced)
struct LoadTests {
    /// What `trust-dev load-check` prints (one JSON line; see `LoadCheckCommand.Report`).
    struct Report: Decodable {
        var http: String
        var concurrency: Int
        var sent: Int
        var succeeded: Int
        var failed: Int
        var failures: [String]
        var connectionsOpened: Int
        var openConnections: Int
        var requestsPerHalf: Int
        var rss: [Int?]
        var seconds: Double
        var openingFailure: String?
        var afterLoadFailure: String?
        var openConnectionsAfterShutdown: Int
    }

    /// Runs `trust-dev load-check --http VERSION` — `total` requests, a warm-up of `warmUp`, then two equal
    /// halves, from `concurrency` workers — prints its figures, and checks what every load must show:
    /// every request succeeded, the session is still usable afterwards, its shutdown leaves no
    /// connection open, and RSS does not grow like a leak.
    ///
    /// The bound: a leak shows in *both* halves, so the smaller growth of the two must stay under
    /// 1 KiB per request of a half (4 MB for 4,000 requests). The child runs nothing but this load, yet
    /// malloc keeps freed memory and may take a one-off step (an arena, a larger buffer); such a step
    /// lands in one half only — whereas a leak of 1 KiB per request (or of a connection, ~50–100 KiB,
    /// every few dozen requests) fails it.
    func measure(_ version: String, total: Int = 10_000, warmUp: Int = 2_000, concurrency: Int = 50) async throws -> Report? {
        let arguments = ["load-check", "--http", version, "--requests", "\(total)", "--warm-up", "\(warmUp)", "--concurrency", "\(concurrency)"]
        // The load takes ~7 s (HTTP/1.1) and ~17 s (HTTP/2) alone in a debug build; beside the parallel
        // suites or under ThreadSanitizer several times that — the child may use most of the test's 5 minutes.
        let (status, out, err) = try await run(CLI.devBinary, arguments, timeLimitSeconds: 270)
        #expect(status == 0, "trust-dev \(arguments.joined(separator: " ")) exited \(status): \(err)")
        guard let line = out.split(separator: "\n").last,
            let report = try? JSONDecoder().decode(Report.self, from: Data(line.utf8))
        else {
            Issue.record("no report from trust-dev \(arguments.joined(separator: " ")):\n\(out)\n\(err)")
            return nil
        }
        let rss = report.rss.map { $0.map { "\($0 / 1024) KiB" } ?? "n/a" }.joined(separator: ", ")
        print(
            "[load] \(version) (own process): \(report.sent) requests, \(report.concurrency) workers: "
                + "\(String(format: "%.1f", report.seconds)) s, \(Int(Double(report.sent) / max(report.seconds, 1e-9))) req/s; "
                + "RSS after warm-up, half, end: \(rss)")
        #expect(report.sent == warmUp + 2 * ((total - warmUp) / 2))
        #expect(report.succeeded == report.sent, "\(report.failed) of \(report.sent) requests failed: \(report.failures)")
        #expect(report.failed == 0, "failures: \(report.failures)")
        // Still usable, and shuts down cleanly.
        #expect(report.afterLoadFailure == nil, "the request after the load: \(report.afterLoadFailure ?? "")")
        #expect(report.openConnectionsAfterShutdown == 0)
        if report.rss.count == 3, let r0 = report.rss[0], let r1 = report.rss[1], let r2 = report.rss[2] {
            let half = report.requestsPerHalf
            let growth = min(r1 - r0, r2 - r1)
            #expect(growth < half * 1024, "RSS grew by \((r1 - r0) / 1024) KiB, then \((r2 - r1) / 1024) KiB, over two runs of \(half) requests")
        }
        return report
    }

    /// 10,000 HTTP/1.1 requests from 50 concurrent workers over keep-alive: every one succeeds, exactly
    /// 50 connections (50 handshakes, 50 evaluations) carry them all, and RSS stays flat after warm-up.
    @Test func tenThousandRequestsOverFiftyConnections() async throws {
        guard let report = try await measure("http1") else { return }
        #expect(report.connectionsOpened == report.concurrency, "every request after the first \(report.concurrency) reuses a pooled connection")
        #expect(report.openConnections == report.concurrency)
    }

    /// HTTP/2: 10,000 requests from 50 concurrent workers multiplexed over one connection.
    @Test func http2RequestsMultiplexedOverOneConnection() async throws {
        guard let report = try await measure("http2") else { return }
        #expect(report.openingFailure == nil, "the request opening the connection: \(report.openingFailure ?? "")")
        #expect(report.connectionsOpened == 1, "one shared HTTP/2 connection")
        #expect(report.openConnections == 1)
    }
}

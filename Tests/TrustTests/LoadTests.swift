import Foundation
import NIOConcurrencyHelpers
import Testing
import Trust
import TrustHTTP
import TrustLab

/// The process's resident set size (VmRSS), in bytes; `nil` where `/proc` does not exist.
func residentMemory() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(String(line.dropFirst("VmRSS:".count).filter(\.isNumber))).map { $0 * 1024 }
    }
    return nil
}

/// What a load run saw.
struct LoadResult {
    var succeeded = 0
    var failed = 0
    /// The first few failures, described.
    var failures: [String] = []
}

/// Sends `count` GETs of `url` from `concurrency` concurrent workers, each sending its next request
/// when its previous one has been read to the end; every answer must be `expected`.
func load(_ session: Session, _ url: URL, count: Int, concurrency: Int, expected: String) async -> LoadResult {
    let next = NIOLockedValueBox(0)
    let result = NIOLockedValueBox(LoadResult())
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                while next.withLockedValue({ taken -> Bool in
                    guard taken < count else { return false }
                    taken += 1
                    return true
                }) {
                    var failure: String?
                    do {
                        let response = try await session.data(for: Request(url: url))
                        if response.statusCode != 200 || response.text != expected { failure = "status \(response.statusCode): \(response.text.prefix(80))" }
                    } catch {
                        failure = "\(error)"
                    }
                    result.withLockedValue { result in
                        if let failure {
                            result.failed += 1
                            if result.failures.count < 5 { result.failures.append(failure) }
                        } else {
                            result.succeeded += 1
                        }
                    }
                }
            }
        }
    }
    return result.withLockedValue { $0 }
}

@Suite("Load: many requests over many connections, no failure, no growth", .serialized, .timeLimit(.minutes(5)))
struct LoadTests {
    /// Runs `total` requests in three phases — a warm-up of `warmUp`, then two equal halves — sampling
    /// RSS after each, and checks that RSS does not grow like a leak.
    ///
    /// The bound: a leak shows in *both* halves, so the smaller growth of the two must stay under
    /// 1 KiB per request of a half (4 MB for 4,000 requests). Generous — malloc keeps freed memory,
    /// and other suites run in parallel in this process, so their allocations show in the same RSS;
    /// such a one-off step lands in one half only — yet a leak of 1 KiB per request (or of a
    /// connection, ~50–100 KiB, every few dozen requests) fails it.
    func measure(_ label: String, _ session: Session, _ target: URL, total: Int, warmUp: Int, concurrency: Int) async -> (failed: Int, failures: [String]) {
        let clock = ContinuousClock()
        let start = clock.now
        let half = (total - warmUp) / 2
        var results = [await load(session, target, count: warmUp, concurrency: concurrency, expected: "hello from good\n")]
        var samples = [residentMemory()]
        for _ in 0..<2 {
            results.append(await load(session, target, count: half, concurrency: concurrency, expected: "hello from good\n"))
            samples.append(residentMemory())
        }
        let elapsed = start.duration(to: clock.now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let sent = warmUp + 2 * half
        print("[load] \(label): \(sent) requests, \(concurrency) workers: \(String(format: "%.1f", seconds)) s, \(Int(Double(sent) / seconds)) req/s; "
            + "RSS after warm-up, half, end: \(samples.map { $0.map { "\($0 / 1024) KiB" } ?? "n/a" }.joined(separator: ", "))")
        let succeeded: Int = results.reduce(0) { $0 + $1.succeeded }
        let failed: Int = results.reduce(0) { $0 + $1.failed }
        #expect(succeeded == sent, "\(failed) of \(sent) requests failed")
        if let r0 = samples[0], let r1 = samples[1], let r2 = samples[2] {
            let growth = min(r1 - r0, r2 - r1)
            #expect(growth < half * 1024, "RSS grew by \((r1 - r0) / 1024) KiB, then \((r2 - r1) / 1024) KiB, over two runs of \(half) requests")
        }
        return (failed, results.flatMap(\.failures))
    }

    /// 10,000 HTTP/1.1 requests from 50 concurrent workers over keep-alive: every one succeeds, exactly
    /// 50 connections (50 handshakes, 50 evaluations) carry them all, and RSS stays flat after warm-up.
    @Test func tenThousandRequestsOverFiftyConnections() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki, protocols: .http1Only)
        let counting = CountingEvaluator(DefaultTrustEvaluator(anchors: Lab.anchors))
        let session = try labSession(.evaluator(counting)) { configuration in
            configuration.httpVersion = .http1Only
            configuration.maximumIdleConnectionsPerOrigin = 64
            configuration.evaluationCache = nil  // every connection is evaluated: the count is the number of connections
            configuration.requestTimeout = .seconds(30)
        }
        let target = url(server)
        let concurrency = 50
        let run = await measure("HTTP/1.1", session, target, total: 10_000, warmUp: 2_000, concurrency: concurrency)
        #expect(run.failed == 0, "failures: \(run.failures)")
        #expect(counting.count.withLockedValue { $0 } == concurrency, "every request after the first \(concurrency) reuses a pooled connection")
        #expect(session.openConnectionCount == concurrency)
        // Still usable, and shuts down cleanly.
        #expect(try await session.data(for: Request(url: target)).statusCode == 200)
        await session.shutdown()
        #expect(session.openConnectionCount == 0)
        try await server.shutdown()
    }

    /// HTTP/2: 10,000 requests from 50 concurrent workers multiplexed over one connection.
    @Test func http2RequestsMultiplexedOverOneConnection() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki, protocols: .http2Only)
        let counting = CountingEvaluator(DefaultTrustEvaluator(anchors: Lab.anchors))
        let session = try labSession(.evaluator(counting)) { configuration in
            configuration.evaluationCache = nil
            configuration.requestTimeout = .seconds(30)
        }
        let target = url(server)
        // One request first: it opens the shared connection the others multiplex over.
        #expect(try await session.data(for: Request(url: target)).httpVersion == "HTTP/2")
        let run = await measure("HTTP/2", session, target, total: 10_000, warmUp: 2_000, concurrency: 50)
        #expect(run.failed == 0, "failures: \(run.failures)")
        #expect(counting.count.withLockedValue { $0 } == 1, "one shared HTTP/2 connection")
        #expect(try await session.data(for: Request(url: target)).statusCode == 200)
        await session.shutdown()
        try await server.shutdown()
    }
}

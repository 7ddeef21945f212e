import ArgumentParser
import Foundation
import NIOConcurrencyHelpers
import Trust
import TrustHTTP
import TrustLab

/// `trust-dev load-check`: the load test's run, in a process of its own — a good lab server and
/// a `TrustHTTPClient` on loopback, N requests from C concurrent workers (a warm-up, then two equal halves),
/// the resident set size sampled after each phase. Prints one JSON line of figures; judging them is
/// the caller's job (`LoadTests`).
///
/// A test that measures memory or time measures it in a child process of its own, never the shared
/// test process: this process runs only this load, so its RSS is this load's.
///
/// Exit 0 when the run happened, whatever its figures; 64 for bad usage.
struct LoadCheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load-check",
        abstract: "Run a load against an in-process lab server and print its figures as one JSON line (for the tests).",
        discussion: """
            HTTP/1.1: the session opens and pools up to 64 connections, so C workers need exactly C connections. \
            HTTP/2: one request first opens the connection the workers then multiplex over. The evaluation cache is \
            off, so the evaluator's count is the number of connections opened. After the load: one more request on the \
            same session, then its shutdown.
            """)

    /// The HTTP version the lab server offers (ALPN) and every response must carry.
    enum HTTPVersion: String, ExpressibleByArgument, CaseIterable {
        case http1
        case http2

        /// What the server offers.
        var protocols: LabServer.Protocols {
            switch self {
            case .http1: return .http1Only
            case .http2: return .http2Only
            }
        }

        /// `TrustHTTPClientResponse.httpVersion` of every answer.
        var responseVersion: String {
            switch self {
            case .http1: return "HTTP/1.1"
            case .http2: return "HTTP/2"
            }
        }
    }

    @Option(name: .customLong("http"), help: "The HTTP version: http1 or http2.")
    var version: HTTPVersion = .http1

    @Option(help: "Requests in all, warm-up included.")
    var requests = 10_000

    @Option(help: "Requests of the warm-up (the rest is split into two equal halves).")
    var warmUp = 2_000

    @Option(help: "Concurrent workers, each sending its next request when its previous one has been read.")
    var concurrency = 50

    /// What the answer of the lab server `good` reads.
    static let expectedBody = "hello from good\n"

    func validate() throws {
        guard concurrency > 0 else { throw ValidationError("--concurrency must be positive") }
        guard warmUp >= 0, requests - warmUp >= 2 else { throw ValidationError("--requests must exceed --warm-up by at least 2") }
    }

    func run() async throws {
        let pki = try LabPKI.make()
        let server = try await LabServer.start("good", pki: pki, protocols: version.protocols)
        let counting = LabCountingEvaluator(DefaultTrustEvaluator(anchors: .only(pki.trustedRoots)))
        var configuration = TrustHTTPClientConfiguration()
        configuration.serverTrust = counting
        configuration.resolve = LabPKI.loopbackResolve
        configuration.evaluationCache = nil  // every connection is evaluated: the count is the number of connections
        configuration.requestTimeout = .seconds(30)
        if version == .http1 {
            configuration.httpVersion = .http1Only
            // C workers, C connections: above the default limit of concurrent connections per origin (6).
            configuration.maximumConnectionsPerOrigin = 64
            configuration.maximumIdleConnectionsPerOrigin = 64
        }
        let session = try TrustHTTPClient(configuration: configuration)
        let target = URL(string: server.baseURL + "/")!
        var report = Report(http: version.rawValue, concurrency: concurrency)
        if version == .http2 {
            // One request first: it opens the shared connection the others multiplex over.
            report.openingFailure = await Self.failure(of: session, target, version: version)
        }

        let clock = ContinuousClock()
        let start = clock.now
        let half = (requests - warmUp) / 2
        var results = [await load(session, target, count: warmUp)]
        report.rss = [Self.residentMemory()]
        for _ in 0..<2 {
            results.append(await load(session, target, count: half))
            report.rss.append(Self.residentMemory())
        }
        let elapsed = start.duration(to: clock.now)
        report.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        report.requestsPerHalf = half
        report.sent = warmUp + 2 * half
        report.succeeded = results.reduce(0) { $0 + $1.succeeded }
        report.failed = results.reduce(0) { $0 + $1.failed }
        report.failures = Array(results.flatMap(\.failures).prefix(Self.failuresKept))
        report.connectionsOpened = counting.count
        report.openConnections = session.openConnectionCount

        report.afterLoadFailure = await Self.failure(of: session, target, version: version)
        await session.shutdown()
        report.openConnectionsAfterShutdown = session.openConnectionCount
        try await server.shutdown()

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(report), as: UTF8.self))
    }

    /// How many failures a report describes.
    static let failuresKept = 5

    /// Sends `count` GETs of `url` from ``concurrency`` concurrent workers, each sending its next
    /// request when its previous one has been read to the end.
    func load(_ session: TrustHTTPClient, _ url: URL, count: Int) async -> LoadResult {
        let version = version
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
                        let failure = await Self.failure(of: session, url, version: version)
                        result.withLockedValue { result in
                            if let failure {
                                result.failed += 1
                                if result.failures.count < Self.failuresKept { result.failures.append(failure) }
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

    /// What went wrong with one GET of `url` — an error, a status other than 200, another body or
    /// another HTTP version than the lab server's — or `nil` when nothing did.
    static func failure(of session: TrustHTTPClient, _ url: URL, version: HTTPVersion) async -> String? {
        do {
            let response = try await session.data(for: TrustHTTPClientRequest(url: url))
            guard response.statusCode == 200, response.text == Self.expectedBody, response.httpVersion.text == version.responseVersion else {
                return "\(response.httpVersion.text) \(response.statusCode): \(response.text.prefix(80))"
            }
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// This process's resident set size (VmRSS), in bytes; `nil` where `/proc` does not exist.
    static func residentMemory() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(String(line.dropFirst("VmRSS:".count).filter(\.isNumber))).map { $0 * 1024 }
        }
        return nil
    }

    /// What one phase of the load saw.
    struct LoadResult: Sendable {
        var succeeded = 0
        var failed = 0
        /// The first few failures, described.
        var failures: [String] = []
    }

    /// The figures printed, one JSON line; `LoadTests` decodes the same keys.
    struct Report: Encodable {
        /// `http1` or `http2`.
        var http: String
        /// Concurrent workers.
        var concurrency: Int
        /// Requests sent under load (warm-up and both halves).
        var sent = 0
        var succeeded = 0
        var failed = 0
        /// The first few failures, described.
        var failures: [String] = []
        /// Evaluations with the evaluation cache off: connections opened, the opening request's included.
        var connectionsOpened = 0
        /// The session's open connections right after the load.
        var openConnections = 0
        /// Requests in each of the two halves.
        var requestsPerHalf = 0
        /// VmRSS in bytes after the warm-up, the first half and the second half (`null` without `/proc`).
        var rss: [Int?] = []
        /// How long the warm-up and both halves took.
        var seconds = 0.0
        /// HTTP/2 only: what went wrong with the request that opens the shared connection (absent when nothing did).
        var openingFailure: String?
        /// What went wrong with the request sent on the same session after the load (absent when nothing did).
        var afterLoadFailure: String?
        /// The session's open connections after its shutdown.
        var openConnectionsAfterShutdown = 0
    }
}

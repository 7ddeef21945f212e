import ArgumentParser
import Foundation
import Trust
import TrustHTTP
import TrustLab

/// `trust-dev construction-check`: proves in a process of its own that a session's request path builds
/// no path validator, anchor index or TLS context after the first request to a host. For each way of
/// configuring server trust, a session (evaluation cache off, no idle connections kept, so every request
/// opens a connection and evaluates its chain) sends one request to a lab server, then more; the process's
/// construction counts (``ConstructionCounter``) are read before the first, after it, and after the rest.
/// Prints one JSON line; judging it is the caller's job (`RouterTests`). The counts are process-wide, so
/// they are read here, where nothing else runs, never in the shared test process.
struct ConstructionCheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "construction-check",
        abstract: "Count validators, anchor indexes and TLS contexts built per request (for the tests).")

    @Option(help: "Requests after the first, each on a new connection.")
    var requests = 20

    struct Counts: Codable, Equatable {
        var pathValidators: Int
        var anchorIndexes: Int
        var tlsContexts: Int

        static var now: Counts {
            Counts(
                pathValidators: ConstructionCounter.pathValidators.value, anchorIndexes: ConstructionCounter.anchorIndexes.value,
                tlsContexts: ConstructionCounter.tlsContexts.value)
        }

        static func - (a: Counts, b: Counts) -> Counts {
            Counts(
                pathValidators: a.pathValidators - b.pathValidators, anchorIndexes: a.anchorIndexes - b.anchorIndexes,
                tlsContexts: a.tlsContexts - b.tlsContexts)
        }
    }

    struct Scenario: Codable {
        var name: String
        /// Built with the session and on its first request.
        var first: Counts
        /// Built by the requests after the first.
        var after: Counts
        var succeeded: Int
        var failures: [String]
    }

    func run() async throws {
        let pki = try LabPKI.make()
        let directory = NSTemporaryDirectory() + "trust-construction-check-" + UUID().uuidString
        _ = try pki.write(to: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // `DefaultTrustEvaluator()` reads the system roots from SSL_CERT_FILE (as OpenSSL does): here, the lab's.
        setenv("SSL_CERT_FILE", directory + "/roots.pem", 1)
        let server = try await LabServer.start("good", pki: pki)
        let configurationFile = directory + "/trust.json"
        try
            #"{"version": 1, "hosts": [{"host": "**.lab.test", "anchors": {"certificates": ["roots.pem"], "replaceSystem": true}, "pins": {"sha256": ["\#(pki.intermediate.certificate.spkiPin)", "\#(pki.root.certificate.spkiPin)"]}}]}"#
            .write(toFile: configurationFile, atomically: true, encoding: .utf8)
        let configured = try ConfiguredTrustEvaluator(contentsOf: configurationFile)
        let custom = DefaultTrustEvaluator(anchors: .only(pki.trustedRoots))
        let trusts: [(String, any TrustEvaluator)] = [
            ("system-default", DefaultTrustEvaluator()),
            ("evaluator", custom),
            ("per-host", PerHostTrustEvaluator(["GOOD.lab.test.": custom], otherHosts: DefaultTrustEvaluator(anchors: .only([])))),
            ("configuration", configured),
            ("security-policy", SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [pki.root.certificate])),
        ]
        var scenarios: [Scenario] = []
        for (name, trust) in trusts {
            var configuration = TrustHTTPClientConfiguration()
            configuration.serverTrust = trust
            configuration.resolve = LabPKI.loopbackResolve
            configuration.evaluationCache = nil
            configuration.maximumIdleConnectionsPerOrigin = 0
            configuration.requestTimeout = .seconds(30)
            let before = Counts.now
            let session = try TrustHTTPClient(configuration: configuration)
            let target = URL(string: server.baseURL + "/")!
            var failures: [String] = []
            var succeeded = 0
            func send() async {
                do {
                    let response = try await session.data(for: TrustHTTPClientRequest(url: target))
                    if response.statusCode == 200 { succeeded += 1 } else { failures.append("status \(response.statusCode)") }
                } catch {
                    failures.append("\(error)")
                }
            }
            await send()
            let afterFirst = Counts.now
            for _ in 0..<requests { await send() }
            let afterAll = Counts.now
            await session.shutdown()
            scenarios.append(
                Scenario(name: name, first: afterFirst - before, after: afterAll - afterFirst, succeeded: succeeded, failures: Array(failures.prefix(3))))
        }
        try await server.shutdown()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(scenarios), as: UTF8.self))
    }
}

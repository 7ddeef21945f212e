import Foundation
import Testing
import TrustHTTPTestSupport
import TrustTestSupport

/// The request path builds nothing expensive after a host's first request: no path validator, no anchor
/// index, no TLS context — measured in `trust-dev construction-check`, a process of its own (the counts are
/// process-wide; other suites build their own in this one).
@Suite("Session: one route per host, built once", .paced)
struct SessionRouterTests {
    struct Counts: Decodable, Equatable {
        var pathValidators: Int
        var anchorIndexes: Int
        var tlsContexts: Int
    }

    struct Scenario: Decodable {
        var name: String
        var first: Counts
        var after: Counts
        var succeeded: Int
        var failures: [String]
    }

    @Test func requestsAfterTheFirstBuildNothing() async throws {
        let (status, out, err) = try await run(CLI.devBinary, ["construction-check", "--requests", "20"], timeLimitSeconds: 120)
        try #require(status == 0, "\(err)")
        let scenarios = try JSONDecoder().decode([Scenario].self, from: Data(out.utf8))
        #expect(Set(scenarios.map(\.name)) == ["system-default", "evaluator", "per-host", "configuration", "security-policy"])
        for scenario in scenarios {
            print("construction-check \(scenario.name): first request \(scenario.first), 20 more \(scenario.after)")
            #expect(scenario.succeeded == 21, "\(scenario.name): \(scenario.failures)")
            #expect(
                scenario.after == Counts(pathValidators: 0, anchorIndexes: 0, tlsContexts: 0),
                "\(scenario.name) built \(scenario.after) after its first request")
            // The session's own contexts are made with it; a validator at most once (the shared default evaluator).
            #expect(scenario.first.tlsContexts == 1 && scenario.first.pathValidators <= 1, "\(scenario.name): \(scenario.first)")
        }
    }
}

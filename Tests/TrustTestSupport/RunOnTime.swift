import Testing

/// The `trust` binary with `arguments`, run again (twice at most) when the machine was too slow for a deadline the
/// command line cannot raise — the revocation fetch budget (4 s), or a handshake that waited on it — as a full
/// `swift test` beside a build can be. For tests of what the command says about revocation, not of its timing
/// (`RevocationBudgetTests` covers that): the caller asserts on the run that was not cut short. `attempts` counts the
/// runs, for tests that count the requests a responder received.
package func runOnTime(_ arguments: [String], attempts: inout Int) async throws -> (Int32, String, String) {
    var result = try await run(CLI.binary, arguments)
    attempts += 1
    for _ in 0..<2 where cutShort(result) {
        result = try await run(CLI.binary, arguments)
        attempts += 1
    }
    return result
}

/// Whether a run ended on the fetch budget or a timeout rather than on what it was asked.
private func cutShort(_ result: (Int32, String, String)) -> Bool {
    let text = result.1 + result.2
    return text.contains("no answer within the revocation fetch budget") || text.contains("timed out")
}

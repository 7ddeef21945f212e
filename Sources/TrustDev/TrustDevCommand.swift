import ArgumentParser

/// `trust-dev`: the developers' harnesses — the benchmarks, the load and construction checks the tests run in
/// processes of their own, and the authentication-header fuzzer. Users do not install it: it is not the
/// `trust` tool, `Scripts/release-build.sh` builds it only when named (`Scripts/release-build.sh trust-dev`),
/// and nothing in it is reachable from `trust`. `swift build` and `swift test` build it, as the tests run it.
@main
struct TrustDevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust-dev",
        abstract: "Developer harnesses for swift-trust: benchmarks, load and construction checks, fuzzing (not installed).",
        discussion: """
            Exit codes: 0 the run happened (and, for fuzz, every property held), 1 a failure or a property \
            violation, 64 bad usage.
            """,
        subcommands: [BenchCommand.self, FuzzCommand.self, LoadCheckCommand.self, ConstructionCheckCommand.self, FirstEvaluationCommand.self])
}

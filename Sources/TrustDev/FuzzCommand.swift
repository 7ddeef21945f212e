import ArgumentParser
import Foundation
import TrustHTTP
import TrustLab

/// `trust-dev fuzz auth-headers`: feeds the HTTP authentication parsers random and mutated input and
/// checks their properties on every one. A crash ends the process (non-zero, no summary).
struct FuzzCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuzz",
        abstract: "Fuzz a parser with random and mutated input (run with -c release for large counts).",
        discussion: """
            Target auth-headers: WWW-Authenticate / Authentication-Info parsing, Digest challenge checks and answers.
            Properties checked on every input: the parser's bounds hold; every challenge parsed prints back to a field
            that parses to the same challenge; a Digest answer built from any accepted challenge parses as a clean
            parameter list. Exit 0 when every property held, 1 otherwise.
            """)

    @Argument(help: "What to fuzz: auth-headers.")
    var target: String

    @Option(help: "How many inputs.")
    var count = 100_000

    @Option(help: "The seed (the same seed replays the same inputs).")
    var seed: UInt64 = 1

    static let seeds = [
        #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
        #"Basic realm="simple", charset="UTF-8", Newauth realm="apps", type=1, title="Login to \"apps\"""#,
        #"Negotiate YII+/abc==, NTLM, Bearer realm="x", error="invalid_token", error_description="The access token expired""#,
        #"Digest realm="api@example.org", qop="auth", algorithm=SHA-512-256-sess, nonce="5TsQ", opaque="HRPC", charset=UTF-8, userhash=true, stale=TRUE"#,
        #"nextnonce="abc", qop=auth, rspauth="d1f", cnonce="x", nc=00000001"#,
    ]
    static let alphabet = [
        "Basic", "Digest", "realm", "nonce", "qop", "algorithm", "=", "=", "\"", "\"", "\\", ",", ",", " ", " ", "\t", "a", "Z", "0",
        "-", "/", "+", "~", "auth", "auth-int", "MD5", "SHA-256", "-sess", "\r\n", "\u{0}", "é", "\u{7F}", "userhash=true",
    ]

    func validate() throws {
        guard target == "auth-headers" else { throw ValidationError("unknown fuzz target \(target) (auth-headers)") }
        guard count > 0 else { throw ValidationError("--count must be positive") }
    }

    func run() throws {
        var fuzzer = LabFuzzer(seed: seed, seeds: Self.seeds, alphabet: Self.alphabet)
        var challenges = 0
        var diagnostics = 0
        var digestAnswers = 0
        var violations: [String] = []
        let started = ContinuousClock.now
        for _ in 0..<count {
            let outcome = AuthenticationHeaderProperties.check([fuzzer.next()])
            challenges += outcome.challenges
            diagnostics += outcome.diagnostics
            digestAnswers += outcome.digestAnswers
            violations += outcome.violations
            if violations.count > 20 { break }
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            "auth-headers: \(count) inputs (seed \(seed)) in \(String(format: "%.1f", seconds)) s, \(String(format: "%.2f", seconds / Double(count) * 1e6)) µs each; "
                + "\(challenges) challenges parsed, \(diagnostics) diagnostics, \(digestAnswers) Digest answers built; \(violations.count) property violations")
        for violation in violations.prefix(20) { print("  " + violation) }
        if !violations.isEmpty { throw ExitCode(1) }
    }
}

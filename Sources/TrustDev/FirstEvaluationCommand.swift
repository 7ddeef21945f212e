import ArgumentParser
import Foundation
import Trust

/// `trust-dev first-evaluation`: what an app pays for its first trust decision, measured in a
/// process of its own (`trust-dev bench` starts one per sample). The clock starts before anything of
/// the engine has been touched and stops at the decision: reading and decoding the chain file, the
/// system roots (indexed by subject on first use) plus the given anchor, the Public Suffix List's
/// first lookup, and one validation with the host name checked. A second evaluation of the same
/// chain follows, with a validator built the same way, as the in-process baseline. Prints the
/// two durations in microseconds, one line; exit 1 when the chain is not trusted.
struct FirstEvaluationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "first-evaluation",
        abstract: "Time the first trust evaluation of a fresh process (for trust-dev bench).")

    @Option(help: "The presented chain, leaf first (PEM).")
    var chain: String

    @Option(help: "An anchor added to the system roots (PEM).")
    var anchor: String

    @Option(help: "The host name checked.")
    var host: String

    func run() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let first = try await evaluate()
        let firstDone = clock.now
        let second = try await evaluate()
        let secondDone = clock.now
        guard first && second else { throw ExitCode.failure }  // not trusted
        let micros = { (d: Duration) in Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12 }
        print(String(format: "%.1f %.1f", micros(start.duration(to: firstDone)), micros(firstDone.duration(to: secondDone))))
    }

    /// One evaluation from the files, as `trust evaluate --anchors` does it; `true` when trusted.
    func evaluate() async throws -> Bool {
        let presented = try CertificateSource.entries(atPath: chain).compactMap(\.certificate)
        let anchors = try CertificateSource.entries(atPath: anchor).compactMap(\.certificate)
        let validator = PathValidator(anchors: .system(adding: anchors), policy: .webPKI)
        let trust = try ServerTrust(presentedChain: presented, host: host)
        return await validator.evaluate(trust).isTrusted
    }
}

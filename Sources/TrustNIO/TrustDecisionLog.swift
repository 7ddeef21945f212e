import Logging
import Trust

/// How a server-trust decision is logged (swift-log), the same way wherever it is made: by a
/// `TrustHTTPClient` (`TrustHTTPClientConfiguration.logger`) or by a ``ServerTrustVerifier`` in a plain NIO client
/// (``ServerTrustVerifier/logger``).
///
/// - A trusted decision: `debug`, "server trusted".
/// - A refused decision: `notice`, "server not trusted" — `warning` when a pin did not match, the
///   pattern of an interception.
///
/// Metadata keys (stable API): `trust.host`, `trust.port` (when known), `trust.policy`,
/// `trust.decision` (`trusted` | `refused`), `trust.cached` (when known), `trust.pins_seen`, `trust.pins_expected`
/// (when the policy pins), `trust.reasons` (reason codes, refused only), `trust.override` (who replaced the
/// evaluator's decision: `challenge-handler`, `allow-invalid-certificates`) with `trust.override_reasons` (the
/// reason codes of the decision it replaced, when that one refused). Only hosts, ports, policy names,
/// reason codes and pins: a decision holds no secret, and nothing else is logged. The message is a fixed
/// text; the host and the policy name are metadata values escaped by `DisplayText` (a name a peer chose
/// never carries a line break or a terminal control into a log).
public enum TrustDecisionLog {
    /// The metadata of `decision` for a connection to `host` (and `port`, when known).
    public static func metadata(for decision: TrustDecision, host: String, port: Int?, cached: Bool?) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "trust.host": .string(DisplayText.escaped(host)), "trust.policy": .string(DisplayText.escaped(decision.policy.description)),
            "trust.decision": "\(decision.isTrusted ? "trusted" : "refused")",
            "trust.pins_seen": .array(decision.pinsSeen.map { .string($0.description) }),
        ]
        if let port { metadata["trust.port"] = "\(port)" }
        if let cached { metadata["trust.cached"] = "\(cached)" }
        if !decision.expectedPins.isEmpty { metadata["trust.pins_expected"] = .array(decision.expectedPins.map { .string($0.description) }) }
        if !decision.isTrusted { metadata["trust.reasons"] = .array(decision.reasons.map { .string($0.code) }) }
        if let override = decision.override {
            metadata["trust.override"] = "\(override.origin)"
            if !override.replaced.isTrusted { metadata["trust.override_reasons"] = .array(override.replaced.reasons.map { .string($0.code) }) }
        }
        return metadata
    }

    /// The level a decision is logged at (see above).
    public static func level(of decision: TrustDecision) -> Logger.Level {
        if decision.isTrusted { return .debug }
        return decision.reasons.contains { $0.code == "pin-mismatch" } ? .warning : .notice
    }

    /// Logs `decision` to `logger`; `port` and `cached` are left out where the caller cannot know them.
    public static func log(_ decision: TrustDecision, host: String, port: Int?, cached: Bool?, to logger: Logger) {
        let level = level(of: decision)
        // The level is checked first: metadata (pins, reasons) is built only for a line that is written.
        guard logger.logLevel <= level else { return }
        logger.log(
            level: level, decision.isTrusted ? "server trusted" : "server not trusted",
            metadata: metadata(for: decision, host: host, port: port, cached: cached))
    }
}

import CoreMetrics
import Logging
import NIOCore
import Trust
import TrustNIO
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One server-trust decision of a session, as ``TrustHTTPClientConfiguration/decisionObserver`` receives it
/// (TrustKit's `pinningValidatorCallback`, for apps with telemetry of their own).
public struct TrustDecisionEvent: Sendable {
    /// The host the connection was for (canonical) and its port.
    public var host: String
    public var port: Int
    /// The decision: trusted or not, every reason, the presented chain, the validated path, pins.
    public var decision: TrustDecision
    /// Whether the decision came from the session's evaluation cache (no evaluation ran).
    public var cached: Bool
    /// How long the evaluation took (zero for a cached decision, and when a challenge handler refused before any ran).
    public var duration: Duration

    /// The certificates the server presented, leaf first.
    public var presentedChain: [Certificate] { decision.presentedChain }
}

/// What a session tells the world about itself: log lines (swift-log, when a logger is configured),
/// metrics (swift-metrics: the configured factory, else the one the app bootstrapped), and each
/// trust decision to the configured observer. Nothing it records carries a secret: hosts, ports,
/// policies, reason codes, pins and error codes only — never a URL's path, query or user-info, a
/// header value or a credential. Every message is a fixed text; values a peer chose (a host from a
/// redirect, a realm, a certificate subject) are metadata, escaped by `DisplayText`.
///
/// Log levels: a trusted decision and a successful connection at `debug`; a refused decision at
/// `notice`, at `warning` when a pin did not match (the pattern of an interception; decisions are
/// worded by `TrustDecisionLog`, as a plain NIO client's `ServerTrustVerifier` words them); a failed request,
/// a refused client certificate and failed HTTP authentication at `notice`; a pin-failure report at
/// `info`.
///
/// Metrics (labels are stable API):
/// - `swift_trust_decisions_total` {outcome: trusted|refused, reason: a reason code or `none`} —
///   one increment per reason of a refused decision;
/// - `swift_trust_evaluation_duration` (timer, nanoseconds) {cached: true|false};
/// - `swift_trust_cache_lookups_total` {result: hit|miss};
/// - `swift_trust_connection_duration` (timer, nanoseconds) {scheme, result: ok|failed} — TCP, TLS and
///   the trust decision of a new connection;
/// - `swift_trust_request_failures_total` {code: the `TrustHTTPClientError.Code` name};
/// - `swift_trust_http_authentication_failures_total` {scheme: basic|digest, proxy: true|false};
/// - `swift_trust_reports_total` {result: sent|dropped};
/// - `swift_trust_configuration_changes_total` {result: swapped|rejected, reason: the rejection's code or `none`} —
///   a reloading trust configuration put in force or refused (logged at `notice` and `warning`).
struct SessionTelemetry: Sendable {
    let logger: Logger?
    let observer: (@Sendable (TrustDecisionEvent) -> Void)?
    let configurationObserver: (@Sendable (ReloadingTrustConfiguration.Event) -> Void)?
    let factory: any MetricsFactory

    static let decisions = "swift_trust_decisions_total"
    static let evaluationDuration = "swift_trust_evaluation_duration"
    static let cacheLookups = "swift_trust_cache_lookups_total"
    static let connectionDuration = "swift_trust_connection_duration"
    static let requestFailures = "swift_trust_request_failures_total"
    static let authenticationFailures = "swift_trust_http_authentication_failures_total"
    static let reports = "swift_trust_reports_total"
    static let configurationChanges = "swift_trust_configuration_changes_total"

    init(_ configuration: TrustHTTPClientConfiguration) {
        logger = configuration.logger
        observer = configuration.decisionObserver
        configurationObserver = configuration.trustConfigurationObserver
        factory = configuration.metricsFactory ?? MetricsSystem.factory
    }

    /// The decision a handshake to `host:port` went by; `duration` is its evaluation's (nil when none ran: a
    /// challenge handler refused without one, and nothing is timed).
    func decided(_ decision: TrustDecision, host: String, port: Int, cached: Bool, duration: Duration?) {
        if let duration {
            Timer(label: Self.evaluationDuration, dimensions: [("cached", String(cached))], factory: factory).recordNanoseconds(
                TimeAmount(duration).nanoseconds)
        }
        if decision.isTrusted {
            Counter(label: Self.decisions, dimensions: [("outcome", "trusted"), ("reason", "none")], factory: factory).increment()
        } else {
            for code in Set(decision.reasons.map(\.code)).sorted() {
                Counter(label: Self.decisions, dimensions: [("outcome", "refused"), ("reason", code)], factory: factory).increment()
            }
        }
        observer?(TrustDecisionEvent(host: host, port: port, decision: decision, cached: cached, duration: duration ?? .zero))
        if let logger { TrustDecisionLog.log(decision, host: host, port: port, cached: cached, to: logger) }
    }

    /// A reloading trust configuration put in force, or refused (the one in force stays).
    func trustConfigurationChanged(_ event: ReloadingTrustConfiguration.Event) {
        switch event {
        case .reloaded(let generation, _):
            Counter(label: Self.configurationChanges, dimensions: [("result", "swapped"), ("reason", "none")], factory: factory).increment()
            logger?.notice("trust configuration swapped", metadata: ["trust.generation": "\(generation)"])
        case .rejected(let rejection):
            Counter(label: Self.configurationChanges, dimensions: [("result", "rejected"), ("reason", rejection.code)], factory: factory).increment()
            logger?.warning(
                "trust configuration rejected; the one in force stays",
                metadata: ["trust.rejection": .string(rejection.code), "trust.rejection_detail": .string(DisplayText.escaped(rejection.description))])
        }
        configurationObserver?(event)
    }

    /// A cache lookup in the handshake.
    func cacheLookup(hit: Bool) {
        Counter(label: Self.cacheLookups, dimensions: [("result", hit ? "hit" : "miss")], factory: factory).increment()
    }

    /// A new connection made (or not) in `duration`.
    func connected(_ origin: Origin, duration: Duration, failed: Bool) {
        Timer(label: Self.connectionDuration, dimensions: [("scheme", origin.scheme), ("result", failed ? "failed" : "ok")], factory: factory)
            .recordNanoseconds(TimeAmount(duration).nanoseconds)
        logger?.debug(
            failed ? "connection failed" : "connected",
            metadata: [
                "http.host": .string(DisplayText.escaped(origin.host)), "http.port": "\(origin.port)",
                "connection.milliseconds": "\(TimeAmount(duration).nanoseconds / 1_000_000)",
            ])
    }

    /// A request that ended with an error.
    func requestFailed(_ error: TrustHTTPClientError, url: URL) {
        let code = "\(error.code)"
        Counter(label: Self.requestFailures, dimensions: [("code", code)], factory: factory).increment()
        guard let logger else { return }
        let clientCertificate = error.code == .clientCertificateRejected || error.code == .clientCertificateRequired
        logger.notice(
            clientCertificate ? "client certificate refused" : "request failed",
            metadata: [
                "http.host": .string(DisplayText.escaped(url.host ?? "")), "http.port": "\(url.port.map(String.init) ?? "")", "error.code": "\(code)",
                "error.code_value": "\(error.code.rawValue)",
            ])
    }

    /// HTTP authentication that ended with the 401/407 after a credential was refused.
    func authenticationFailed(space: ProtectionSpace, scheme: String, failures: Int) {
        Counter(label: Self.authenticationFailures, dimensions: [("scheme", scheme), ("proxy", String(space.isProxy))], factory: factory).increment()
        logger?.notice(
            "HTTP authentication failed",
            metadata: [
                "http.host": .string(DisplayText.escaped(space.host)), "http.port": "\(space.port)", "auth.scheme": .string(DisplayText.escaped(scheme)),
                "auth.realm": .string(DisplayText.escaped(space.realm ?? "")),
                "auth.proxy": "\(space.isProxy)", "auth.failures": "\(failures)",
            ])
    }

    /// A pin-failure report handed to the reporter: `sent` (scheduled) or dropped, with the reason.
    func reportSubmitted(_ outcome: PinFailureReporter.Outcome, host: String, to uris: [URL]) {
        let message: Logger.Message
        switch outcome {
        case .queued: message = "pin failure report sent"
        case .duplicate: message = "pin failure report dropped (a duplicate)"
        case .tooManyInFlight: message = "pin failure report dropped (too many in flight)"
        case .noURI: message = "pin failure report dropped (no URI)"
        }
        Counter(label: Self.reports, dimensions: [("result", outcome == .queued ? "sent" : "dropped")], factory: factory).increment()
        logger?.info(
            message,
            metadata: [
                "trust.host": .string(DisplayText.escaped(host)),
                "report.endpoints": .array(uris.map { .string(DisplayText.escaped(($0.host ?? "") + ($0.port.map { ":\($0)" } ?? ""))) }),
            ])
    }
}

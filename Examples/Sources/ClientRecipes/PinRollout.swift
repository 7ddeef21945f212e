// Rolling out pins without breaking anyone: the configuration file names the new pins in `report-only` mode with a
// `reportURIs` endpoint; clients connect as before and report every chain the pins would have refused. The service
// that collects the reports reads them as `PinFailureReport`s (RFC 7469 §3's format) to decide when to enforce.
import Foundation
import Trust
import TrustHTTP

/// The sending side (a client's reporter) and the collecting side (reading what arrived).
public enum PinRollout {
    /// A reporter that delivers through `configuration` (the collector's own trust: a report about a broken pin must
    /// still reach it), to at most two endpoints per report, within three seconds.
    public static func reporter(configuration: TrustHTTPClientConfiguration) -> PinFailureReporter {
        PinFailureReporter(configuration: configuration, limits: PinFailureReporter.Limits(maximumURIs: 2, deliveryTimeout: .seconds(3), maximumInFlight: 8))
    }

    /// One line for the startup log: where reports may go and how long one may take.
    public static func describe(_ reporter: PinFailureReporter) -> String {
        "pin reports: up to \(reporter.limits.maximumURIs) endpoints each, \(reporter.limits.deliveryTimeout) per report, "
            + "\(reporter.limits.maximumInFlight) at a time"
    }

    /// What a rollout dashboard shows of one report.
    public struct Finding: Sendable, Equatable {
        public var host: String
        public var port: Int
        /// Whether the entry was enforced (a refusal) or report-only (the connection went on).
        public var enforced: Bool
        public var result: String
        /// The pins the client expected.
        public var knownPins: [String]
        /// How many certificates the server sent, and how many the validated path held.
        public var served: Int
        public var validated: Int
        /// The entry's pattern covered subdomains; the host it was noted for.
        public var includeSubdomains: Bool
        public var notedHostname: String
        /// When the client saw it, and when the pins it expected stop being enforced (RFC 3339).
        public var seenAt: String
        public var pinsExpire: String?
    }

    /// Reads one received report (the JSON body POSTed to the endpoint); nil when it is not one.
    public static func finding(in body: Data) -> Finding? {
        guard let report = try? JSONDecoder().decode(PinFailureReport.self, from: body) else { return nil }
        return Finding(
            host: report.hostname, port: report.port, enforced: report.enforceMode, result: report.validationResult,
            knownPins: report.knownPins, served: report.servedCertificateChain.count, validated: report.validatedCertificateChain.count,
            includeSubdomains: report.includeSubdomains, notedHostname: report.notedHostname, seenAt: report.dateTime,
            pinsExpire: report.effectiveExpirationDate)
    }

    /// The same report again within this window is not sent again (per client).
    public static var quietPeriod: TimeInterval { PinFailureReporter.deduplicationWindow }
}

import HTTPTypes
import NIOConcurrencyHelpers
import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Sends `PinFailureReport`s to a configuration entry's report URIs: POSTed as JSON by a session
/// of its own — with its own trust policy, so a report about a broken pin can still reach an
/// endpoint on another domain — in the background: a report never delays or changes the outcome of
/// the connection it is about. Identical reports (same host, port, result, chains, pins) are sent
/// once per 24 hours. There is no default endpoint.
///
/// Delivery is bounded (``Limits``): a report goes to its URIs at once, concurrently, at most
/// ``Limits/maximumURIs`` of them, and its whole delivery ends within ``Limits/deliveryTimeout`` whatever the
/// endpoints do (a stalled endpoint is given up, not waited for in turn); at most ``Limits/maximumInFlight``
/// reports are delivered at a time, and one beyond that is dropped. So ``flush()`` returns within about one
/// delivery timeout. Reports are best effort, as RFC 7469 §3 has them ("the UA SHOULD … report", with no retry).
public final class PinFailureReporter: Sendable {
    /// How long an identical report is not sent again (24 hours).
    public static let deduplicationWindow: TimeInterval = 24 * 3600
    static let remembered = 1024

    /// Bounds on delivery.
    public struct Limits: Sendable, Hashable {
        /// The most report URIs one report goes to (default 4); any beyond are not sent to.
        public var maximumURIs: Int
        /// How long one report's delivery may take, to all its URIs together (default 5 s).
        public var deliveryTimeout: Duration
        /// The most reports delivered at a time (default 16); a report submitted beyond that is dropped.
        public var maximumInFlight: Int

        /// Limits; the defaults keep a refused command's exit within a few seconds.
        public init(maximumURIs: Int = 4, deliveryTimeout: Duration = .seconds(5), maximumInFlight: Int = 16) {
            self.maximumURIs = maximumURIs
            self.deliveryTimeout = deliveryTimeout
            self.maximumInFlight = maximumInFlight
        }
    }

    /// The bounds on delivery.
    public let limits: Limits
    private let configuration: TrustHTTPClientConfiguration
    private let sent = NIOLockedValueBox<[String: Date]>([:])
    /// Reports being sent; each removes itself when done.
    private let inFlight = NIOLockedValueBox<[UUID: Task<Void, Never>]>([:])

    /// - Parameters:
    ///   - configuration: the reporting session's own configuration (trust, proxy); its connect and request timeouts
    ///     are cut to `limits.deliveryTimeout`.
    ///   - limits: the bounds on delivery.
    public init(configuration: TrustHTTPClientConfiguration = TrustHTTPClientConfiguration(), limits: Limits = Limits()) {
        var configuration = configuration
        configuration.requestTimeout = min(configuration.requestTimeout, limits.deliveryTimeout)
        configuration.connectTimeout = min(configuration.connectTimeout, limits.deliveryTimeout)
        self.configuration = configuration
        self.limits = limits
    }

    /// What `enqueue(_:to:now:)` did with a report.
    public enum Outcome: String, Sendable, Hashable {
        /// Queued for delivery.
        case queued
        /// Not sent: the same report was queued within ``PinFailureReporter/deduplicationWindow``.
        case duplicate
        /// Not sent: ``Limits/maximumInFlight`` reports were being delivered. Not remembered either: the same report
        /// submitted later is sent.
        case tooManyInFlight
        /// Not sent: no URI to send it to (none given, or ``Limits/maximumURIs`` is 0).
        case noURI
    }

    /// Queues `report` for `uris` unless the same report went out within the window. Returns whether it was queued
    /// (``enqueue(_:to:now:)`` tells why not).
    @discardableResult
    package func submit(_ report: PinFailureReport, to uris: [URL], now: Date = Date()) -> Bool {
        enqueue(report, to: uris, now: now) == .queued
    }

    /// Queues `report` for `uris` unless the same report was queued within the window or the in-flight limit is
    /// reached; says which. Only a queued report is remembered for deduplication, so one dropped for the in-flight
    /// limit is not suppressed when it comes again.
    package func enqueue(_ report: PinFailureReport, to uris: [URL], now: Date = Date()) -> Outcome {
        guard !uris.isEmpty, limits.maximumURIs > 0 else { return .noURI }
        let key = report.deduplicationKey
        let configuration = self.configuration
        let limits = self.limits
        let targets = Array(uris.prefix(limits.maximumURIs))
        let body = report.json()
        let id = UUID()
        let inFlight = self.inFlight
        let sent = self.sent
        // Both decisions under the in-flight lock (the only place that takes both locks, always in this order), so
        // that two identical reports submitted at once are not both queued.
        return inFlight.withLockedValue { tasks in
            let fresh = sent.withLockedValue { sent in
                guard let last = sent[key] else { return true }
                return now.timeIntervalSince(last) >= Self.deduplicationWindow
            }
            guard fresh else { return .duplicate }
            guard tasks.count < limits.maximumInFlight else { return .tooManyInFlight }
            sent.withLockedValue { sent in
                if sent.count >= Self.remembered {
                    sent = sent.filter { now.timeIntervalSince($0.value) < Self.deduplicationWindow }
                    if sent.count >= Self.remembered, let oldest = sent.min(by: { $0.value < $1.value })?.key { sent[oldest] = nil }
                }
                sent[key] = now
            }
            tasks[id] = Task.detached {
                if let session = try? TrustHTTPClient(configuration: configuration) {
                    await Self.deliver(body, to: targets, session: session, within: limits.deliveryTimeout)
                    await session.shutdown()
                }
                inFlight.withLockedValue { _ = $0.removeValue(forKey: id) }
            }
            return .queued
        }
    }

    /// POSTs `body` to every URI at once; returns when all have answered or failed, or when `timeout` has passed
    /// (the requests still running are then cancelled).
    private static func deliver(_ body: Data, to uris: [URL], session: TrustHTTPClient, within timeout: Duration) async {
        await withTaskGroup(of: Bool.self) { group in
            for uri in uris {
                group.addTask {
                    _ = try? await session.data(
                        for: TrustHTTPClientRequest(url: uri, method: "POST", headers: [.contentType: "application/json"], body: .bytes(body), timeout: timeout)
                    )
                    return true
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            var delivered = 0
            for await isDelivery in group {
                guard isDelivery else { break }  // the time is up
                delivered += 1
                if delivered == uris.count { break }
            }
            group.cancelAll()
        }
    }

    /// Waits for the reports queued so far (for tests and orderly shutdown): within about one
    /// ``Limits/deliveryTimeout``, since every delivery is bounded by it.
    public func flush() async {
        let tasks = inFlight.withLockedValue { Array($0.values) }
        for task in tasks { await task.value }
    }
}

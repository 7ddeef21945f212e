import Foundation
import NIOConcurrencyHelpers
import Trust

/// Sends `PinFailureReport`s to a configuration entry's report URIs: POSTed as JSON by a session
/// of its own — with its own trust policy, so a report about a broken pin can still reach an
/// endpoint on another domain — in the background: a report never delays or changes the outcome of
/// the connection it is about. Identical reports (same host, port, result, chains, pins) are sent
/// once per 24 hours. There is no default endpoint.
public final class PinFailureReporter: Sendable {
    /// How long an identical report is not sent again (24 hours).
    public static let deduplicationWindow: TimeInterval = 24 * 3600
    static let remembered = 1024

    private let configuration: SessionConfiguration
    private let sent = NIOLockedValueBox<[String: Date]>([:])
    /// Reports being sent; each removes itself when done.
    private let inFlight = NIOLockedValueBox<[UUID: Task<Void, Never>]>([:])

    /// - Parameter configuration: the reporting session's own configuration (trust, timeouts, proxy).
    public init(configuration: SessionConfiguration = SessionConfiguration()) {
        var configuration = configuration
        configuration.requestTimeout = min(configuration.requestTimeout, .seconds(30))
        self.configuration = configuration
    }

    /// Queues `report` for `uris` unless the same report went out within the window. Returns whether it was queued.
    @discardableResult
    public func submit(_ report: PinFailureReport, to uris: [URL], now: Date = Date()) -> Bool {
        guard !uris.isEmpty else { return false }
        let key = report.deduplicationKey
        let fresh = sent.withLockedValue { sent -> Bool in
            if let last = sent[key], now.timeIntervalSince(last) < Self.deduplicationWindow { return false }
            if sent.count >= Self.remembered {
                sent = sent.filter { now.timeIntervalSince($0.value) < Self.deduplicationWindow }
                if sent.count >= Self.remembered, let oldest = sent.min(by: { $0.value < $1.value })?.key { sent[oldest] = nil }
            }
            sent[key] = now
            return true
        }
        guard fresh else { return false }
        let configuration = self.configuration
        let body = report.json()
        let id = UUID()
        let inFlight = self.inFlight
        inFlight.withLockedValue { tasks in
            tasks[id] = Task.detached {
                if let session = try? Session(configuration: configuration) {
                    for uri in uris {
                        _ = try? await session.data(for: Request(url: uri, method: "POST", headers: [("content-type", "application/json")], body: body))
                    }
                    await session.shutdown()
                }
                inFlight.withLockedValue { _ = $0.removeValue(forKey: id) }
            }
        }
        return true
    }

    /// Waits for the reports queued so far (for tests and orderly shutdown).
    public func flush() async {
        let tasks = inFlight.withLockedValue { Array($0.values) }
        for task in tasks { await task.value }
    }
}

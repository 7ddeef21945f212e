import TrustHTTP

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// curl's `--retry` rules (curl 7.88, `tool_operate.c`), so scripts that retry with curl retry the
/// same way with `trust get`:
/// - transient failures: a timeout (exit 28) or a host that cannot be resolved (6) always; a refused
///   connection (7) with `--retry-connrefused`; an HTTP answer 408, 429, 500, 502, 503 or 504 (the
///   transfer itself succeeded, or failed with 22 under `--fail`); any failure with `--retry-all-errors`;
/// - the wait: `--retry-delay` seconds each time when given, else 1 s doubling up to 10 minutes; an
///   HTTP answer's `Retry-After` (delta-seconds above 0) replaces it;
/// - `--retry-max-time`: no retry once that many seconds have passed since the first attempt.
///
/// Differences: `-m` bounds the whole command, retries included (curl's bounds each attempt); a
/// `Retry-After` wait is not cut short to end within `--retry-max-time`, nor given as an HTTP date.
struct RetryPolicy {
    /// Why a failure is retried; the raw value is curl's wording in its warning.
    enum Reason: String {
        case timeout = ": timeout"
        case connectionRefused = ": connection refused"
        case http = ": HTTP error"
        case allErrors = "(retrying all errors)"
    }

    /// Retries left.
    private(set) var remaining: Int
    private let fixedDelay: Int?
    private var sleep: Int
    private let maximumTime: Int?
    private let connectionRefused: Bool
    private let allErrors: Bool
    private let failOnError: Bool
    private let start = ContinuousClock.now

    init(count: Int, delay: Int?, maximumTime: Int?, connectionRefused: Bool, allErrors: Bool, failOnError: Bool) {
        self.remaining = max(0, count)
        self.fixedDelay = delay.flatMap { $0 > 0 ? $0 : nil }
        self.sleep = fixedDelay ?? 1
        self.maximumTime = maximumTime.flatMap { $0 > 0 ? $0 : nil }
        self.connectionRefused = connectionRefused
        self.allErrors = allErrors
        self.failOnError = failOnError
    }

    /// The reason to retry an HTTP answer with this status, if it is a transient one.
    func transientStatus(_ status: Int) -> Reason? {
        [408, 429, 500, 502, 503, 504].contains(status) ? .http : nil
    }

    /// The reason to retry a failure ending with curl exit `code`, if it is transient.
    func transientFailure(code: Int32, error: TrustHTTPClientError?, status: Int?) -> Reason? {
        switch code {
        case 28, 6, 5:
            return .timeout
        case 7 where connectionRefused && (error?.underlying?.lowercased().contains("refused") ?? false):
            return .connectionRefused
        case 22 where failOnError && status.flatMap(transientStatus) != nil:
            return .http
        default:
            return allErrors && code != 0 ? .allErrors : nil
        }
    }

    /// Whether a retry is left and the time allows it.
    func allows(_ reason: Reason) -> Bool {
        guard remaining > 0 else { return false }
        guard let maximumTime else { return true }
        return start.duration(to: .now) < .seconds(maximumTime)
    }

    /// Takes a retry: the seconds to wait before it. `retryAfter` is the answer's `Retry-After`.
    mutating func next(retryAfter: String?) -> Int {
        remaining -= 1
        var wait = sleep
        if let retryAfter, let seconds = Int(retryAfter.trimmingASCIIBlanks()), seconds > 0 {
            wait = seconds
        }
        if fixedDelay == nil { sleep = min(sleep * 2, 600) }
        return wait
    }
}

/// Thrown inside an attempt of `trust get` to go around again.
struct RetryAttempt: Error {
    var reason: RetryPolicy.Reason
    var retryAfter: String?
    /// The failed attempt's error lines (none for an HTTP status retried without `--fail`): curl prints
    /// them before its warning, attempt by attempt.
    var lines: [String] = []
}

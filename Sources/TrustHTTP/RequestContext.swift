import NIOConcurrencyHelpers
import NIOCore
import Tracing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One request's deadlines (across redirects and challenges) and whether one fired.
final class RequestContext: Sendable {
    let timeout: Duration
    let deadline: ContinuousClock.Instant
    /// Whether the timeout also bounds reading the body (`data(for:)`) or only the head (`bytes(for:)`).
    let coversBody: Bool
    /// The deadline of the whole transfer, streamed body included (``TrustHTTPClientConfiguration/resourceTimeout``).
    let resourceDeadline: ContinuousClock.Instant?
    /// The read timeout of every exchange.
    let readTimeout: Duration?
    /// The configured resource timeout (for messages).
    let resourceTimeout: Duration?
    /// The request's span, when a tracer records one.
    let span: (any Span)?
    private let fired = NIOLockedValueBox(false)

    /// - Parameters:
    ///   - timeout: Until the body has been read (`coversBody`), or until the response head.
    ///   - resourceTimeout: For the whole transfer; with `coversBody` the earlier of the two applies.
    init(timeout: Duration, resourceTimeout: Duration? = nil, readTimeout: Duration? = nil, coversBody: Bool, span: (any Span)? = nil) {
        self.span = span
        let now = ContinuousClock.now
        self.timeout = coversBody ? min(timeout, resourceTimeout ?? timeout) : timeout
        self.deadline = now + min(timeout, resourceTimeout ?? timeout)
        self.resourceDeadline = coversBody ? nil : resourceTimeout.map { now + $0 }
        self.readTimeout = readTimeout
        self.resourceTimeout = resourceTimeout
        self.coversBody = coversBody
    }

    /// The deadlines of the next exchange, or a `timedOut` error.
    func exchangeTimeouts(url: URL) throws -> Connection.ExchangeTimeouts {
        let head = try remaining(url: url)
        let total = coversBody ? head : resourceDeadline.map { ContinuousClock.now.duration(to: $0) }
        return Connection.ExchangeTimeouts(
            head: head, total: total, read: readTimeout, onTimeout: markTimedOut, message: timeoutMessage, totalCoversHead: coversBody)
    }

    var timedOut: Bool { fired.withLockedValue { $0 } }

    /// What a timed-out exchange says: the request timeout, or — for the whole transfer of a
    /// streamed response — the resource timeout.
    @Sendable func timeoutMessage(total: Bool) -> String {
        total && !coversBody ? "the transfer timed out after \(resourceTimeout ?? timeout) (resource timeout)" : requestTimedOut
    }

    /// The request timeout's message.
    var requestTimedOut: String { "the request timed out after \(timeout)" }

    @Sendable func markTimedOut() {
        fired.withLockedValue { $0 = true }
    }

    /// Time left, or a `timedOut` error.
    func remaining(url: URL) throws -> Duration {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else {
            markTimedOut()
            throw TrustHTTPClientError(.timedOut, requestTimedOut, url: url)
        }
        return left
    }

    /// Runs `operation`, turning a timer-induced failure into `timedOut` and a cancelled Task into `cancelled`.
    func mapErrors<T>(url: URL, _ operation: () async throws -> T) async throws -> T {
        do {
            return try await operation()
        } catch {
            throw mapped(error, url: url)
        }
    }

    /// What ``mapErrors(url:_:)`` throws for `error`.
    private func mapped(_ error: any Error, url: URL) -> TrustHTTPClientError {
        if let error = error as? TrustHTTPClientError {
            if timedOut && error.code != .timedOut && error.trustDecision == nil {
                return TrustHTTPClientError(.timedOut, requestTimedOut, url: url)
            }
            if Task.isCancelled && error.trustDecision == nil { return TrustHTTPClientError(.cancelled, "the request was cancelled", url: url) }
            return error
        }
        if timedOut { return TrustHTTPClientError(.timedOut, requestTimedOut, url: url) }
        if Task.isCancelled || error is CancellationError { return TrustHTTPClientError(.cancelled, "the request was cancelled", url: url) }
        return TrustHTTPClientError(.networkConnectionLost, "the request failed", url: url, underlyingError: error)
    }
}

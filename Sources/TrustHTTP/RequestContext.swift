import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// One request's deadline (across redirects and challenges) and whether it fired.
final class RequestContext: Sendable {
    let timeout: Duration
    let deadline: ContinuousClock.Instant
    /// Whether the timeout also bounds reading the body (`data(for:)`) or only the head (`bytes(for:)`).
    let coversBody: Bool
    private let fired = NIOLockedValueBox(false)

    init(timeout: Duration, coversBody: Bool) {
        self.timeout = timeout
        self.deadline = .now + timeout
        self.coversBody = coversBody
    }

    var timedOut: Bool { fired.withLockedValue { $0 } }

    @Sendable func markTimedOut() {
        fired.withLockedValue { $0 = true }
    }

    /// Time left, or a `timedOut` error.
    func remaining(url: URL) throws -> Duration {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else {
            markTimedOut()
            throw SessionError(.timedOut, "the request timed out after \(timeout)", url: url)
        }
        return left
    }

    /// Runs `operation`, turning a timer-induced failure into `timedOut` and a cancelled Task into `cancelled`.
    func mapErrors<T>(url: URL, _ operation: () async throws -> T) async throws -> T {
        do {
            return try await operation()
        } catch let error as SessionError {
            if timedOut && error.code != .timedOut && error.trustDecision == nil {
                throw SessionError(.timedOut, "the request timed out after \(timeout)", url: url)
            }
            if Task.isCancelled && error.trustDecision == nil { throw SessionError(.cancelled, "the request was cancelled", url: url) }
            throw error
        } catch {
            if timedOut { throw SessionError(.timedOut, "the request timed out after \(timeout)", url: url) }
            if Task.isCancelled || error is CancellationError { throw SessionError(.cancelled, "the request was cancelled", url: url) }
            throw SessionError(.networkConnectionLost, "the request failed", url: url, underlying: "\(error)")
        }
    }
}

import NIOConcurrencyHelpers

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Answers authentication challenges. Set one on a ``TrustHTTPClientConfiguration`` (session level) and/or
/// on a ``TrustHTTPClientRequest`` (task level). The task-level handler is asked first; when it answers
/// ``ChallengeDisposition/performDefaultHandling`` the session-level handler is asked; when that
/// also defers (or there is none), the session performs default handling.
public protocol ChallengeHandler: Sendable {
    /// Answers one challenge.
    /// - Parameter challenge: what the server asks for, where, and how often it was answered wrongly.
    /// - Returns: the disposition; `.performDefaultHandling` defers to the next handler, then to the session.
    func handle(_ challenge: AuthenticationChallenge) async -> ChallengeDisposition
}

/// A handler from a closure.
public struct ClosureChallengeHandler: ChallengeHandler {
    let body: @Sendable (AuthenticationChallenge) async -> ChallengeDisposition

    /// A handler that answers with `body`.
    public init(_ body: @escaping @Sendable (AuthenticationChallenge) async -> ChallengeDisposition) {
        self.body = body
    }

    /// Answers with the closure's result.
    public func handle(_ challenge: AuthenticationChallenge) async -> ChallengeDisposition {
        await body(challenge)
    }
}

/// The completion-handler shape of `URLSessionDelegate`, so existing delegate code ports with few changes:
///
/// ```swift
/// final class Pinning: TrustHTTPClientDelegate {
///     func session(_ session: TrustHTTPClient, didReceive challenge: AuthenticationChallenge,
///                  completionHandler: @escaping @Sendable (ChallengeDisposition) -> Void) {
///         guard challenge.protectionSpace.authenticationMethod == .serverTrust, let trust = challenge.serverTrust
///         else { return completionHandler(.performDefaultHandling) }
///         completionHandler(isPinned(trust) ? .useCredential(Credential(trust: trust)) : .cancelAuthenticationChallenge)
///     }
/// }
/// ```
/// Calling the completion handler more than once is harmless (the first answer counts); never
/// calling it fails the request at its timeout.
public protocol TrustHTTPClientDelegate: AnyObject, Sendable {
    func session(
        _ session: TrustHTTPClient, didReceive challenge: AuthenticationChallenge, completionHandler: @escaping @Sendable (ChallengeDisposition) -> Void)
}

/// Adapts a ``TrustHTTPClientDelegate`` to ``ChallengeHandler``; holds the delegate weakly, like URLSession does not.
struct DelegateChallengeHandler: ChallengeHandler {
    let delegate: any TrustHTTPClientDelegate
    let session: @Sendable () -> TrustHTTPClient?

    func handle(_ challenge: AuthenticationChallenge) async -> ChallengeDisposition {
        guard let session = session() else { return .performDefaultHandling }
        return await withCheckedContinuation { continuation in
            let first = FirstAnswer()
            delegate.session(session, didReceive: challenge) { disposition in
                if first.claim() { continuation.resume(returning: disposition) }
            }
        }
    }
}

/// The order in which handlers are asked, shared by every kind of challenge.
enum ChallengeChain {
    /// Asks the task-level handler, then (if it deferred) the session-level one. Returns the first
    /// answer other than `.performDefaultHandling` (or that), or `nil` if the handlers did not answer
    /// within `timeout`. The timeout is one deadline for the whole chain: a session-level handler has
    /// what the task-level one left of it, so a challenge never waits longer than `timeout`.
    static func ask(task: (any ChallengeHandler)?, session: (any ChallengeHandler)?, _ challenge: AuthenticationChallenge, timeout: Duration) async
        -> ChallengeDisposition?
    {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var disposition = ChallengeDisposition.performDefaultHandling
        for handler in [task, session].compactMap({ $0 }) {
            let remaining = deadline - clock.now
            guard remaining > .zero, let answer = await ask(handler, challenge, timeout: remaining) else { return nil }
            disposition = answer
            if case .performDefaultHandling = answer { continue }
            break
        }
        return disposition
    }

    /// One handler's answer, or `nil` if it does not answer within `timeout` or the calling task is cancelled
    /// first (the caller tells the two apart with `Task.isCancelled`); either way the handler is cancelled.
    ///
    /// The handler is asked on behalf of the calling task — the request's: it starts from it (its priority,
    /// its task-local values, the trace context among them) and is cancelled with it. The wait for the answer
    /// is a task group of the caller (the answer against the timer), so cancelling the request ends the wait
    /// and cancels the handler. The handler's own body runs in a task of its own only so that a handler that
    /// ignores cancellation cannot hold the request past its timeout (structured concurrency waits for every
    /// child): it is left to finish alone, and its late answer is dropped.
    static func ask(_ handler: any ChallengeHandler, _ challenge: AuthenticationChallenge, timeout: Duration) async -> ChallengeDisposition? {
        let answer = AwaitedAnswer<ChallengeDisposition>()
        let work = Task { answer.give(await handler.handle(challenge)) }
        let disposition = await withTaskGroup(of: ChallengeDisposition?.self) { group in
            group.addTask { await answer.value() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        if disposition == nil { work.cancel() }
        return disposition
    }
}

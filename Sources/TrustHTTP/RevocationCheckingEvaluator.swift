import NIOConcurrencyHelpers
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A path validator whose revocation checking also asks the certificates' OCSP responders and fetches the CRLs they
/// point to: before an evaluation, the path is built, each certificate in scope is asked about at its OCSP responder
/// (``OCSPFetcher``), and for any certificate still without an answer its CRLs are fetched (``CRLFetcher``); then the
/// validator decides with those and any CRLs the policy holds.
///
/// ```swift
/// var policy = ValidationPolicy.webPKI
/// policy.revocation = RevocationPolicy(mode: .soft, depth: .chain)
/// let evaluator = try RevocationCheckingEvaluator(policy: policy)
/// configuration.serverTrust = evaluator
/// ```
///
/// OCSP first, CRLs as the fallback: a response is a few kilobytes about one certificate, a CRL may be megabytes
/// about all of them. With revocation `off` nothing is fetched. The decision says which source revoked a
/// certificate, or why its status is unknown (no responder or distribution point, a query or fetch that failed and
/// how, a stale or badly signed response or CRL).
///
/// **A budget.** The evaluation runs inside the TLS handshake, under the connection's deadline (10 s by default), and a
/// responder may stall: OCSP queries and CRL fetches together wait at most `fetchBudget` (4 s by default) — OCSP
/// up to half of it while CRLs could still answer, CRLs the rest. Then the decision is made with what has arrived:
/// a certificate still without an answer has an unknown status
/// (`TrustFailureReason.revocationStatusUnknown(subject:detail:)`, its detail naming the budget), which soft
/// checking allows with a note and hard checking refuses — a responder's silence never becomes a timeout. The
/// queries go on in the background, within their own limits, and fill the caches for later evaluations.
public struct RevocationCheckingEvaluator: ImmediateTrustEvaluator {
    /// The default `fetchBudget`: 4 s, under half the default connect timeout that covers the handshake.
    public static let defaultFetchBudget: Duration = .seconds(4)
    /// The validator, its policy's revocation consulting `fetcher`'s and `ocspFetcher`'s caches.
    public let validator: PathValidator
    /// Where CRLs come from.
    package let fetcher: CRLFetcher
    /// Where OCSP responses come from; `nil` when OCSP is not used.
    package let ocspFetcher: OCSPFetcher?
    /// How long one evaluation waits for OCSP responders and CRL distribution points together.
    package let fetchBudget: Duration
    /// The same validator without revocation checking: it finds the path whose certificates are asked about.
    private let pathFinder: PathValidator

    /// A validator over `anchors` and `policy`, with `fetcher` and `ocspFetcher` (new ones by default) filling its caches;
    /// `usesOCSP: false` fetches CRLs only; `fetchBudget` bounds the wait for them in one evaluation.
    public init(
        anchors: TrustAnchors = .system, policy: ValidationPolicy = .webPKI, fetcher: CRLFetcher? = nil, ocspFetcher: OCSPFetcher? = nil,
        usesOCSP: Bool = true, name: String = "default + fetched revocation", fetchBudget: Duration = RevocationCheckingEvaluator.defaultFetchBudget
    ) throws {
        let fetcher = try fetcher ?? CRLFetcher()
        let ocsp = usesOCSP ? try ocspFetcher ?? OCSPFetcher() : nil
        var policy = policy
        policy.revocation.cache = fetcher.cache
        policy.revocation.ocspCache = ocsp?.cache
        self.validator = PathValidator(anchors: anchors, policy: policy, name: name)
        var unchecked = policy
        unchecked.revocation = .off
        self.pathFinder = PathValidator(anchors: anchors, policy: unchecked, name: name)
        self.fetcher = fetcher
        self.ocspFetcher = ocsp
        self.fetchBudget = fetchBudget
    }

    private var revocation: RevocationPolicy { validator.policy.revocation }

    /// Shuts the fetchers' sessions down.
    public func shutdown() async {
        await fetcher.shutdown()
        await ocspFetcher?.shutdown()
    }

    /// Fetches what is missing, then validates.
    public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        guard revocation.mode != .off, !isSettled(trust) else { return await validator.evaluate(trust) }
        let found = await pathFinder.evaluate(trust)
        // A chain refused for other reasons is refused whatever its revocation status: nothing to ask.
        guard found.isTrusted else { return await validator.evaluate(trust) }
        let path = found.validatedPath
        let positions = revocation.checkedPositions(in: path)
        let time = trust.evaluationTime
        let started = ContinuousClock.now
        let deadline = started + fetchBudget
        var complete = true
        if let ocspFetcher {
            let pairs = positions.map { (path[$0], path[$0 + 1]) }
            // OCSP may use the whole budget only when no CRL could answer instead.
            let crlsPossible = positions.contains { !CRLDistributionPoints.fetchableURIs(of: path[$0]).isEmpty }
            complete = await Self.wait(until: crlsPossible ? started + fetchBudget / 2 : deadline) {
                await ocspFetcher.prefetch(pairs, at: time)
            }
        }
        // CRLs for the certificates OCSP left without an answer.
        let unanswered = positions.map { path[$0] }.filter { certificate in
            ocspFetcher?.cache.entry(for: certificate)?.isDefinitive(for: certificate, at: time) != true
        }
        let fetcher = self.fetcher
        let crlsComplete = await Self.wait(until: deadline) { await fetcher.prefetch(for: unanswered, depth: .chain, at: time) }
        complete = complete && crlsComplete
        let decision = await validator.evaluate(trust)
        return complete ? decision : Self.noting(decision, budget: fetchBudget)
    }

    /// Runs `work` and waits for it until `deadline` at most: whether it finished. Unfinished work goes on (a query
    /// stores its answer in the cache when it comes).
    private static func wait(until deadline: ContinuousClock.Instant, for work: @escaping @Sendable () async -> Void) async -> Bool {
        let race = Race()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            race.start(continuation, work: work, deadline: deadline)
        }
    }

    /// `decision` with the budget named: in the detail of every unknown status (refused under hard checking,
    /// allowed under soft) and in a note.
    private static func noting(_ decision: TrustDecision, budget: Duration) -> TrustDecision {
        let why = "no answer within the revocation fetch budget of \(budget)"
        func named(_ reason: TrustFailureReason) -> TrustFailureReason {
            guard case .revocationStatusUnknown(let subject, let detail) = reason.detail else { return reason }
            return .revocationStatusUnknown(subject: subject, detail: detail + " (\(why))")
        }
        return decision.rewording(
            reasons: decision.reasons.map(named), allowedFailures: decision.allowedFailures.map(named),
            notes: decision.notes + ["revocation checking stopped waiting for OCSP responders and CRL distribution points: \(why)"])
    }

    /// ``evaluate(_:)`` after ``decisionWithoutSuspending(_:)`` had no answer: with nothing to fetch, the validator's
    /// search without its direct path (just tried); else the fetches and the evaluation.
    public func evaluate(afterImmediateMiss trust: ServerTrust) async -> TrustDecision {
        guard revocation.mode == .off || isSettled(trust) else { return await evaluate(trust) }
        return await validator.evaluate(afterImmediateMiss: trust)
    }

    /// The validator's direct answer when nothing needs fetching; else `nil` (``evaluate(_:)`` fetches).
    public func decisionWithoutSuspending(_ trust: ServerTrust) -> TrustDecision? {
        guard revocation.mode == .off || isSettled(trust) else { return nil }
        return validator.decisionWithoutSuspending(trust)
    }

    /// Whether every certificate of the presented chain in scope, and every intermediate fetched to complete it
    /// (``ServerTrust/fetchedIntermediates``: part of the path judged), has an answer kept: a current OCSP answer, or
    /// else current CRLs (or recent failures of both).
    private func isSettled(_ trust: ServerTrust) -> Bool {
        let chain = trust.presentedChain + trust.fetchedIntermediates
        let inScope = revocation.depth == .leaf ? Array(chain.prefix(1)) : chain
        let time = trust.evaluationTime
        return inScope.allSatisfy { certificate in
            if let ocspFetcher {
                guard ocspFetcher.isSettled(for: [certificate], at: time) else { return false }
                if ocspFetcher.cache.entry(for: certificate)?.isDefinitive(for: certificate, at: time) == true { return true }
            }
            return fetcher.isSettled(for: [certificate], depth: .leaf, at: time)
        }
    }
}

/// The first of a piece of work and a deadline, resuming a continuation once; the timer is cancelled when the work
/// wins, the work is left to finish when the timer does.
private final class Race: @unchecked Sendable {
    private let lock = NIOLock()
    private var continuation: CheckedContinuation<Bool, Never>?
    private var timer: Task<Void, Never>?

    func start(_ continuation: CheckedContinuation<Bool, Never>, work: @escaping @Sendable () async -> Void, deadline: ContinuousClock.Instant) {
        lock.withLock { self.continuation = continuation }
        let timer = Task {
            try? await Task.sleep(until: deadline)
            self.finish(false)
        }
        lock.withLock { self.timer = timer }
        Task {
            await work()
            self.finish(true)
        }
    }

    private func finish(_ completed: Bool) {
        let (waiting, timer) = lock.withLock { () -> (CheckedContinuation<Bool, Never>?, Task<Void, Never>?) in
            defer { continuation = nil }
            return (continuation, completed ? self.timer : nil)
        }
        timer?.cancel()
        waiting?.resume(returning: completed)
    }
}

import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An evaluator that completes an incomplete chain as iOS, Chrome and Windows do: when the path stops at a
/// certificate whose issuer was neither presented nor an anchor, it fetches that issuer from the certificate's
/// Authority Information Access `caIssuers` location (RFC 5280 §4.2.2.1) and evaluates again, level by level.
///
/// ```swift
/// let evaluator = IntermediateFetchingEvaluator(PathValidator(), fetcher: myFetcher)
/// let decision = await evaluator.evaluate(trust)
/// ```
///
/// - **Only when needed.** Nothing is fetched for a chain its evaluator trusts, nor for one refused for another
///   reason than a missing issuer, nor for one whose leaf is refused for what no issuer changes (an expired leaf, a
///   wrong name): fetching could not change that decision. A pin that matches no presented certificate does not stop
///   the fetch: the pinned key may be the missing issuer's.
/// - **Only a candidate.** A fetched certificate joins ``ServerTrust/fetchedIntermediates``: it may link the path,
///   never end it (it is never an anchor), and it is kept only if its name is the issuer the certificate names and
///   its key verifies that certificate's signature. The evaluator then judges the completed path as it judges any
///   other — pins, Certificate Transparency and revocation included.
/// - **Bounded.** Only `http` locations (never `https`, `ldap`, `file` or another scheme); a DER certificate or a
///   certs-only PKCS#7 message, told apart by content; at most 4 fetches and 3 missing levels per evaluation, 64 KiB
///   per answer, 4 s in all (the fetch is inside the TLS handshake); a location already fetched in the evaluation is
///   not fetched again (a loop of issuers ends).
/// - **Said.** The decision's ``TrustDecision/notes`` name each certificate fetched and where from, and each
///   location that failed or was refused, and why.
///
/// **Privacy.** A fetch tells the CA's server, and anyone watching the plain-HTTP request, that some client is
/// validating a certificate it issued (and from which address): the trade-off every platform that fetches makes
/// to accept what browsers accept. With the fetch off, a server that leaves out its intermediate is refused.
public struct IntermediateFetchingEvaluator: ImmediateTrustEvaluator {
    /// Bounds on fetching in one evaluation.
    package struct Limits: Sendable, Hashable {
        /// The most locations fetched (default 4).
        package var maximumFetches = 4
        /// The most missing levels completed (default 3: a leaf's intermediate, its issuer, one more).
        package var maximumDepth = 3
        /// The largest answer, in bytes (default 64 KiB, as Chrome's limit for AIA answers).
        package var maximumSize = 64 << 10
        /// The longest all fetches together may take (default 4 s, under half the default connect timeout).
        package var budget: Duration = .seconds(4)

        /// The defaults.
        package init() {}
    }

    /// The latest that the fetches of an evaluation run in this task may end, besides the budget: the TLS handshake's
    /// deadline, set by the connection that asks for the decision (a task-local value, since the ``TrustEvaluator``
    /// requirements take no deadline). `nil`: the budget alone.
    @TaskLocal package static var deadline: ContinuousClock.Instant?

    /// The evaluator whose decisions are completed.
    package let base: any TrustEvaluator
    /// The base evaluator as an ``ImmediateTrustEvaluator``, when it is one (cast once, here).
    private let immediateBase: (any ImmediateTrustEvaluator)?
    private let fetcher: any IntermediateFetcher
    /// The bounds on fetching.
    package let limits: Limits

    /// `base`, with missing intermediates fetched through `fetcher`.
    public init(_ base: any TrustEvaluator, fetcher: any IntermediateFetcher) {
        self.init(base, fetcher: fetcher, limits: Limits())
    }

    /// `base`, with missing intermediates fetched through `fetcher` within `limits`.
    package init(_ base: any TrustEvaluator, fetcher: any IntermediateFetcher, limits: Limits) {
        self.base = base
        self.immediateBase = base as? any ImmediateTrustEvaluator
        self.fetcher = fetcher
        self.limits = limits
    }

    /// The base evaluator's decision, completed by fetching when a missing issuer is why it refused.
    public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        await completing(await base.evaluate(trust), of: trust) { await base.evaluate($0) }
    }

    /// The base evaluator's decision without suspending (when it is an ``ImmediateTrustEvaluator``), unless it is a
    /// refusal that fetching might change.
    public func decisionWithoutSuspending(_ trust: ServerTrust) -> TrustDecision? {
        guard let decision = immediateBase?.decisionWithoutSuspending(trust), Self.missingIssuer(in: decision) == nil else { return nil }
        return decision
    }

    /// ``evaluate(_:)`` after ``decisionWithoutSuspending(_:)`` had no answer.
    public func evaluate(afterImmediateMiss trust: ServerTrust) async -> TrustDecision {
        guard let immediateBase else { return await evaluate(trust) }
        return await completing(await immediateBase.evaluate(afterImmediateMiss: trust), of: trust) { await base.evaluate($0) }
    }

    /// The certificate whose issuer is missing, when that is why `decision` refuses: the last of its closest path.
    /// `nil` too when the decision also refuses the leaf itself for what no issuer can change (its name, its validity,
    /// its key usage, being a CA): the fetch would tell a CA's server about a connection refused whatever it answered.
    package static func missingIssuer(in decision: TrustDecision) -> Certificate? {
        guard !decision.isTrusted, decision.override == nil, let tip = decision.closestPath.last else { return nil }
        let leaf = decision.closestPath.first?.displayName
        var missing = false
        for reason in decision.reasons {
            switch reason.detail {
            case .noPathToTrustedAnchor(.missingIssuer), .noPathToTrustedAnchor(.issuerNotTrusted):
                missing = true
            case .nameMismatch, .missingSubjectAlternativeName, .leafIsCertificateAuthority, .leafKeyUsageInvalid, .peerNameRequired, .emptyChain:
                return nil
            case .expired(let subject, _, _), .notYetValid(let subject, _, _):
                if subject == leaf { return nil }
            default:
                break
            }
        }
        return missing ? tip : nil
    }

    /// ``completing(_:of:evaluate:)`` for an evaluation that gives more than a decision (a configuration's, with its
    /// pin-failure report): `evaluate` judges each completed trust, and the value returned is the final evaluation's,
    /// its decision carrying the fetches' notes — what it reports is about the completed path, not the chain as
    /// presented.
    package func completing<Evaluation>(
        _ first: Evaluation, of original: ServerTrust, decision: WritableKeyPath<Evaluation, TrustDecision>,
        evaluate: (ServerTrust) async -> Evaluation
    ) async -> Evaluation {
        guard Self.missingIssuer(in: first[keyPath: decision]) != nil else { return first }
        var last = first
        let completed = await completing(first[keyPath: decision], of: original) { trust in
            last = await evaluate(trust)
            return last[keyPath: decision]
        }
        last[keyPath: decision] = completed
        return last
    }

    /// Fetches level by level while the decision refuses for a missing issuer, within the limits, `evaluate` judging
    /// each completed trust (the base's evaluation; a caller's own where an evaluation gives more than a decision —
    /// a configuration's pin-failure report, sent for the final decision only). `first` is the decision on `original`.
    package func completing(_ first: TrustDecision, of original: ServerTrust, evaluate: (ServerTrust) async -> TrustDecision) async -> TrustDecision {
        guard var tip = Self.missingIssuer(in: first) else { return first }
        var decision = first
        var trust = original
        var notes: [String] = []
        var fetchedURLs = Set<URL>()
        var fetches = 0
        var depth = 0
        let budgeted = ContinuousClock.now + limits.budget
        let deadline = Self.deadline.map { min($0, budgeted) } ?? budgeted
        // What ends the fetches first, in words for the notes.
        let limit = deadline < budgeted ? "the handshake's deadline" : "the budget of \(limits.budget)"
        levels: while true {
            let name = "“\(tip.displayName)”"
            let (urls, refused) = CAIssuers.locations(of: tip)
            // A certificate may list any number of locations: a few are named, the rest counted.
            for text in refused.prefix(limits.maximumFetches) {
                notes.append("did not fetch the issuer of \(name) from \(text): only http locations are fetched (RFC 5280 §4.2.2.1)")
            }
            if refused.count > limits.maximumFetches {
                notes.append("did not fetch the issuer of \(name) from \(refused.count - limits.maximumFetches) more locations that are not http")
            }
            if urls.isEmpty {
                if refused.isEmpty { notes.append("\(name) names no location of its issuer (Authority Information Access caIssuers) to fetch it from") }
                break
            }
            guard depth < limits.maximumDepth else {
                notes.append("stopped fetching missing intermediates after \(depth) levels (the limit per evaluation)")
                break
            }
            depth += 1
            var found: [Certificate] = []
            for url in urls {
                guard !fetchedURLs.contains(url) else {
                    notes.append("did not fetch \(url.absoluteString) again for \(name): it was fetched in this evaluation (a loop of issuers)")
                    continue
                }
                guard fetches < limits.maximumFetches else {
                    notes.append("stopped fetching missing intermediates after \(fetches) fetches (the limit per evaluation)")
                    break levels
                }
                guard ContinuousClock.now < deadline else {
                    notes.append("stopped fetching missing intermediates: \(limit) had passed")
                    break levels
                }
                fetchedURLs.insert(url)
                fetches += 1
                let certificates: [Certificate]
                do {
                    certificates = try CAIssuers.certificates(in: try await fetch(url, deadline: deadline, limit: limit))
                } catch {
                    notes.append("could not fetch the issuer of \(name) from \(url.absoluteString): \(error)")
                    continue
                }
                let known = trust.presentedChain + trust.fetchedIntermediates
                let issuers = certificates.filter { candidate in
                    candidate.subject == tip.issuer && !known.contains(candidate) && candidate.publicKey.isValidSignature(tip.signature, for: tip)
                }
                guard !issuers.isEmpty else {
                    let others = certificates.count == 1 ? "its certificate is" : "its \(certificates.count) certificates are"
                    notes.append("\(url.absoluteString) gave no issuer of \(name): \(others) for another name or key, or already known")
                    continue
                }
                for issuer in issuers {
                    notes.append("fetched “\(issuer.displayName)”, the issuer of \(name), from \(url.absoluteString) (Authority Information Access)")
                }
                found = issuers
                break
            }
            guard !found.isEmpty else { break }
            trust.fetchedIntermediates += found
            decision = await evaluate(trust)
            // Another missing level goes on; the same tip again (what was fetched did not link) ends.
            guard let next = Self.missingIssuer(in: decision), next != tip else { break }
            tip = next
        }
        return decision.adding(notes: notes)
    }

    /// Why a fetch gave nothing.
    private struct FetchFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// `fetcher`'s answer for `url`, or a failure once `deadline` (`limit`, in words) has passed or the task is
    /// cancelled. The fetch is then cancelled and left to end on its own: the evaluation, inside a TLS handshake, never
    /// waits for a fetcher that does not stop when it is told to.
    private func fetch(_ url: URL, deadline: ContinuousClock.Instant, limit: String) async throws -> [UInt8] {
        let (fetcher, limits) = (self.fetcher, self.limits)
        let race = FetchRace()
        let body = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
                race.start(continuation, deadline: deadline) { try await fetcher.fetch(url, maximumSize: limits.maximumSize, deadline: deadline) }
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
        guard let body else { throw FetchFailure(description: "no answer within \(limit)") }
        guard body.count <= limits.maximumSize else { throw FetchFailure(description: "an answer over \(limits.maximumSize) bytes") }
        return body
    }
}

/// The first of a fetch, its deadline and the evaluation's cancellation, resuming the evaluation once (a `nil` body:
/// the deadline came first); the fetch and the timer are cancelled when either ends.
private final class FetchRace: Sendable {
    private struct State {
        var continuation: CheckedContinuation<[UInt8]?, any Error>?
        var outcome: Result<[UInt8]?, any Error>?
        var tasks: [Task<Void, Never>] = []
    }

    private let state = LockedState(State())

    func start(
        _ continuation: CheckedContinuation<[UInt8]?, any Error>, deadline: ContinuousClock.Instant,
        work: @escaping @Sendable () async throws -> [UInt8]
    ) {
        // Cancelled before it began: the outcome is already there.
        let early = state.withLock { state -> Result<[UInt8]?, any Error>? in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            return nil
        }
        if let early {
            continuation.resume(with: early)
            return
        }
        let fetching = Task {
            do {
                self.finish(.success(try await work()))
            } catch {
                self.finish(.failure(error))
            }
        }
        let timer = Task {
            do {
                try await Task.sleep(until: deadline, clock: .continuous)
                self.finish(.success(nil))
            } catch {}
        }
        let ended = state.withLock { state -> Bool in
            if state.outcome != nil { return true }
            state.tasks = [fetching, timer]
            return false
        }
        if ended {
            fetching.cancel()
            timer.cancel()
        }
    }

    /// The first outcome resumes the evaluation; later ones are ignored.
    func finish(_ outcome: Result<[UInt8]?, any Error>) {
        let (continuation, tasks) = state.withLock { state -> (CheckedContinuation<[UInt8]?, any Error>?, [Task<Void, Never>]) in
            guard state.outcome == nil else { return (nil, []) }
            state.outcome = outcome
            defer {
                state.continuation = nil
                state.tasks = []
            }
            return (state.continuation, state.tasks)
        }
        for task in tasks { task.cancel() }
        continuation?.resume(with: outcome)
    }
}

import Foundation
import X509

/// An evaluator that completes an incomplete chain as iOS, Chrome and Windows do: when the path stops at a
/// certificate whose issuer was neither presented nor an anchor, it fetches that issuer from the certificate's
/// Authority Information Access `caIssuers` location (RFC 5280 §4.2.2.1) and evaluates again, level by level.
///
/// ```swift
/// let evaluator = IntermediateFetchingEvaluator(PathValidator(), fetcher: myFetcher)
/// let decision = await evaluator.evaluate(trust)
/// ```
///
/// - **Only when needed.** Nothing is fetched for a chain its evaluator trusts, nor for one refused for any other
///   reason than a missing issuer (an expired leaf, a wrong name, a pin): fetching could not change that decision.
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
public struct IntermediateFetchingEvaluator: TrustEvaluator {
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

    /// The evaluator whose decisions are completed.
    package let base: any TrustEvaluator
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
        self.fetcher = fetcher
        self.limits = limits
    }

    /// The base evaluator's decision, completed by fetching when a missing issuer is why it refused.
    public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        await completing(await base.evaluate(trust), of: trust)
    }

    /// The base evaluator's decision without suspending, unless it is a refusal that fetching might change.
    public func decisionWithoutSuspending(_ trust: ServerTrust) -> TrustDecision? {
        guard let decision = base.decisionWithoutSuspending(trust), Self.missingIssuer(in: decision) == nil else { return nil }
        return decision
    }

    /// ``evaluate(_:)`` after ``decisionWithoutSuspending(_:)`` had no answer.
    public func evaluate(afterImmediateMiss trust: ServerTrust) async -> TrustDecision {
        await completing(await base.evaluate(afterImmediateMiss: trust), of: trust)
    }

    /// The certificate whose issuer is missing, when that is why `decision` refuses: the last of its closest path.
    package static func missingIssuer(in decision: TrustDecision) -> Certificate? {
        guard !decision.isTrusted, decision.override == nil, let tip = decision.closestPath.last else { return nil }
        let missing = decision.reasons.contains { reason in
            switch reason.detail {
            case .noPathToTrustedAnchor(.missingIssuer), .noPathToTrustedAnchor(.issuerNotTrusted): return true
            default: return false
            }
        }
        return missing ? tip : nil
    }

    /// Fetches level by level while the decision refuses for a missing issuer, within the limits.
    private func completing(_ first: TrustDecision, of original: ServerTrust) async -> TrustDecision {
        guard var tip = Self.missingIssuer(in: first) else { return first }
        var decision = first
        var trust = original
        var notes: [String] = []
        var fetchedURLs = Set<URL>()
        var fetches = 0
        var depth = 0
        let deadline = ContinuousClock.now + limits.budget
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
                    notes.append("stopped fetching missing intermediates: the budget of \(limits.budget) was spent")
                    break levels
                }
                fetchedURLs.insert(url)
                fetches += 1
                let certificates: [Certificate]
                do {
                    certificates = try CAIssuers.certificates(in: try await fetch(url, deadline: deadline))
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
            decision = await base.evaluate(trust)
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

    /// `fetcher`'s answer for `url`, or a failure once `deadline` has passed (the fetch is then cancelled).
    private func fetch(_ url: URL, deadline: ContinuousClock.Instant) async throws -> [UInt8] {
        let (fetcher, limits) = (self.fetcher, self.limits)
        let body = try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            group.addTask { try await fetcher.fetch(url, maximumSize: limits.maximumSize, deadline: deadline) }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard let body else { throw FetchFailure(description: "no answer within the budget of \(limits.budget)") }
        guard body.count <= limits.maximumSize else { throw FetchFailure(description: "an answer over \(limits.maximumSize) bytes") }
        return body
    }
}

import Foundation
import X509

/// Remembers *trusted* decisions so that a new connection presenting the very same chain for the
/// same name under the same policy does not rebuild the path.
///
/// Safety rules (pitfall 9: a cache must never be a way around verification):
/// - the key is the exact presented chain (certificate bytes, in order), the canonical peer name
///   and the policy identity — a different host, policy or configuration never hits;
/// - only trusted decisions with a validated path are stored (a refusal is always re-evaluated);
/// - an entry is used only while the evaluation time lies within every certificate's validity on
///   its validated path (never past the earliest `notAfter`), and for at most `timeToLive`;
/// - it is bounded: the least recently used entry goes first.
public final class TrustEvaluationCache: @unchecked Sendable {
    struct Key: Hashable {
        var chain: [Certificate]
        var peerName: PeerName?
        var policy: String
    }

    struct Entry {
        var decision: TrustDecision
        var validFrom: Date
        var validUntil: Date
        var storedAt: ContinuousClock.Instant
        var lastUse: UInt64
    }

    /// The most entries kept (at least 1).
    public let capacity: Int
    /// The longest an entry is used after it was stored.
    public let timeToLive: Duration
    private let lock = NSLock()
    private var entries: [Key: Entry] = [:]
    private var tick: UInt64 = 0
    private var hitCount = 0
    private var missCount = 0

    /// Creates an empty cache.
    public init(capacity: Int = 1024, timeToLive: Duration = .seconds(300)) {
        self.capacity = max(1, capacity)
        self.timeToLive = timeToLive
    }

    /// The cached decision for `trust` under `policy`, if there is a usable one.
    public func decision(for trust: ServerTrust, policy: String) -> TrustDecision? {
        let key = Key(chain: trust.presentedChain, peerName: trust.peerName, policy: policy)
        let time = Date(timeIntervalSince1970: trust.evaluationTime.timeIntervalSince1970.rounded(.down))
        lock.lock()
        defer { lock.unlock() }
        guard var entry = entries[key] else {
            missCount += 1
            return nil
        }
        guard entry.validFrom <= time, time <= entry.validUntil, entry.storedAt.duration(to: .now) < timeToLive else {
            entries[key] = nil
            missCount += 1
            return nil
        }
        tick += 1
        entry.lastUse = tick
        entries[key] = entry
        hitCount += 1
        var decision = entry.decision
        decision.evaluationTime = trust.evaluationTime
        return decision
    }

    /// Stores a decision if it may be reused (trusted, with a validated path).
    public func store(_ decision: TrustDecision, for trust: ServerTrust, policy: String) {
        guard decision.isTrusted, !decision.validatedPath.isEmpty, decision.reasons.isEmpty else { return }
        let validFrom = decision.validatedPath.map(\.notValidBefore).max() ?? .distantFuture
        let validUntil = decision.validatedPath.map(\.notValidAfter).min() ?? .distantPast
        let key = Key(chain: trust.presentedChain, peerName: trust.peerName, policy: policy)
        lock.lock()
        defer { lock.unlock() }
        if entries[key] == nil && entries.count >= capacity,
            let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
        {
            entries[oldest] = nil
        }
        tick += 1
        entries[key] = Entry(decision: decision, validFrom: validFrom, validUntil: validUntil, storedAt: .now, lastUse: tick)
    }

    /// The cached decision, or `evaluate`'s (stored when reusable).
    public func evaluate(_ trust: ServerTrust, policy: String, using evaluate: (ServerTrust) async -> TrustDecision) async -> TrustDecision {
        if let cached = decision(for: trust, policy: policy) { return cached }
        let decision = await evaluate(trust)
        store(decision, for: trust, policy: policy)
        return decision
    }

    /// Forgets everything.
    public func removeAll() {
        lock.lock()
        entries = [:]
        lock.unlock()
    }

    /// Entries, hits and misses so far.
    public var statistics: (entries: Int, hits: Int, misses: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (entries.count, hitCount, missCount)
    }
}

/// Wraps an evaluator with a ``TrustEvaluationCache``. `policyIdentity` must name the wrapped
/// evaluator's configuration uniquely within the cache (two evaluators that could decide
/// differently must never share an identity).
public struct CachingTrustEvaluator: TrustEvaluator {
    /// The wrapped evaluator.
    public let base: any TrustEvaluator
    /// The cache the decisions are kept in.
    public let cache: TrustEvaluationCache
    /// The name of the wrapped evaluator's configuration within the cache.
    public let policyIdentity: String

    /// Wraps `base`, caching its decisions in `cache` under `policyIdentity`.
    public init(_ base: any TrustEvaluator, cache: TrustEvaluationCache, policyIdentity: String) {
        self.base = base
        self.cache = cache
        self.policyIdentity = policyIdentity
    }

    /// The cached decision, or the wrapped evaluator's (stored when reusable).
    public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        await cache.evaluate(trust, policy: policyIdentity) { await base.evaluate($0) }
    }
}

import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Remembers *trusted* decisions so that a new connection presenting the very same chain for the
/// same name under the same policy does not rebuild the path.
///
/// Safety rules (a cache must never be a way around verification):
/// - the key is the exact presented chain (every certificate's bytes — to-be-signed part,
///   signature algorithm and signature — in order), the canonical peer name and the policy
///   identity; a different host, policy or configuration never hits. Pins and the name are
///   part of the policy and the key, so a hit skips nothing they would have decided;
/// - only trusted decisions with a validated path and no failure reason are stored (a refusal is
///   always re-evaluated);
/// - an entry is used only while the evaluation time lies within every certificate's validity on
///   its validated path (never past the earliest `notAfter`) and within the decision's own
///   ``TrustDecision/validity`` (never past the `nextUpdate` of the CRLs that vouched for it), and
///   for at most `timeToLive`;
/// - it is bounded: when full, the least recently used entry goes first (O(1)).
public final class TrustEvaluationCache: @unchecked Sendable {
    struct Key: Hashable {
        var chain: [Certificate]
        /// ``ServerTrust/fetchedIntermediates``: a decision reached with them is not one for the chain alone.
        var fetched: [Certificate]
        var peerName: PeerName?
        var policy: String

        // Equality is `Certificate`'s: every byte. The hash feeds each certificate's to-be-signed
        // bytes to the (randomly seeded) hasher in bulk — `Certificate`'s own hash goes byte by
        // byte, which made a lookup cost more than the rest of a hit.
        func hash(into hasher: inout Hasher) {
            hasher.combine(chain.count)
            for certificate in chain {
                hasher.combine(certificate.tbsCertificateBytes.count)
                certificate.tbsCertificateBytes.withUnsafeBytes { hasher.combine(bytes: $0) }
            }
            hasher.combine(fetched.count)
            for certificate in fetched {
                certificate.tbsCertificateBytes.withUnsafeBytes { hasher.combine(bytes: $0) }
            }
            hasher.combine(peerName)
            hasher.combine(policy)
        }
    }

    struct Entry {
        var decision: TrustDecision
        var validFrom: Date
        var validUntil: Date
        var storedAt: ContinuousClock.Instant
    }

    /// The most entries kept (at least 1).
    public let capacity: Int
    /// The longest an entry is used after it was stored.
    public let timeToLive: Duration
    private let lock = Lock()
    private var entries = LRUDictionary<Key, Entry>()
    private var hitCount = 0
    private var missCount = 0

    /// Creates an empty cache.
    public init(capacity: Int = 1024, timeToLive: Duration = .seconds(300)) {
        self.capacity = max(1, capacity)
        self.timeToLive = timeToLive
    }

    /// Creates an empty cache sized by `settings`.
    public convenience init(_ settings: EvaluationCacheSettings) {
        self.init(capacity: settings.capacity, timeToLive: settings.timeToLive)
    }

    /// The cached decision for `trust` under `policy`, if there is a usable one.
    public func decision(for trust: ServerTrust, policy: String) -> TrustDecision? {
        let key = Key(chain: trust.presentedChain, fetched: trust.fetchedIntermediates, peerName: trust.peerName, policy: policy)
        let time = Date(timeIntervalSince1970: trust.evaluationTime.timeIntervalSince1970.rounded(.down))
        let now = ContinuousClock.now
        lock.lock()
        guard let entry = entries.use(key) else {
            missCount += 1
            lock.unlock()
            return nil
        }
        guard entry.validFrom <= time, time <= entry.validUntil, entry.storedAt.duration(to: now) < timeToLive else {
            entries.remove(key)
            missCount += 1
            lock.unlock()
            return nil
        }
        hitCount += 1
        lock.unlock()
        return entry.decision.reused(at: trust.evaluationTime)
    }

    /// Stores a decision if it may be reused (an evaluator's own, trusted, with a validated path).
    public func store(_ decision: TrustDecision, for trust: ServerTrust, policy: String) {
        guard decision.isTrusted, decision.override == nil, !decision.validatedPath.isEmpty, decision.reasons.isEmpty else { return }
        var validFrom = decision.validatedPath.map(\.notValidBefore).max() ?? .distantFuture
        var validUntil = decision.validatedPath.map(\.notValidAfter).min() ?? .distantPast
        // Revocation data (or another rule's time-bounded input) vouches for the decision only within its own window.
        if let validity = decision.validity {
            validFrom = max(validFrom, validity.lowerBound)
            validUntil = min(validUntil, validity.upperBound)
        }
        let key = Key(chain: trust.presentedChain, fetched: trust.fetchedIntermediates, peerName: trust.peerName, policy: policy)
        let entry = Entry(decision: decision, validFrom: validFrom, validUntil: validUntil, storedAt: .now)
        lock.lock()
        entries.set(key, entry, capacity: capacity)
        lock.unlock()
    }

    /// The cached decision, or `evaluate`'s (stored when reusable).
    package func evaluate(_ trust: ServerTrust, policy: String, using evaluate: (ServerTrust) async -> TrustDecision) async -> TrustDecision {
        if let cached = decision(for: trust, policy: policy) { return cached }
        let decision = await evaluate(trust)
        store(decision, for: trust, policy: policy)
        return decision
    }

    /// Forgets everything.
    public func removeAll() {
        lock.lock()
        entries = LRUDictionary()
        lock.unlock()
    }

    /// Entries, hits and misses so far.
    public var statistics: Statistics {
        lock.lock()
        defer { lock.unlock() }
        return Statistics(entries: entries.count, hits: hitCount, misses: missCount)
    }

    /// What a cache holds and how often it answered.
    public struct Statistics: Sendable, Hashable {
        /// The decisions held now.
        public var entries: Int
        /// Lookups answered from the cache.
        public var hits: Int
        /// Lookups that found nothing usable.
        public var misses: Int
    }
}

/// Size and lifetime of a ``TrustEvaluationCache``. `nil` where a setting is optional turns the
/// cache off (``TrustConfiguration/evaluationCache``, a session's configuration).
public struct EvaluationCacheSettings: Sendable, Hashable, Codable {
    /// The most decisions kept.
    public var capacity: Int
    /// The longest a decision is reused after it was stored.
    public var timeToLive: Duration

    /// Settings for at most `capacity` decisions, each reused for up to `timeToLive`.
    public init(capacity: Int = 1024, timeToLive: Duration = .seconds(300)) {
        self.capacity = capacity
        self.timeToLive = timeToLive
    }

    /// The stricter of two settings (the smaller capacity and lifetime); `nil` when either is off.
    package static func stricter(_ a: EvaluationCacheSettings?, _ b: EvaluationCacheSettings?) -> EvaluationCacheSettings? {
        guard let a, let b else { return nil }
        return EvaluationCacheSettings(capacity: min(a.capacity, b.capacity), timeToLive: min(a.timeToLive, b.timeToLive))
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
    package let policyIdentity: String

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

import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// CRLs obtained while the process runs — fetched from distribution points, say — shared by the evaluations
/// that consult it (``RevocationPolicy/cache``) and by whoever fills it.
///
/// Entries are kept by source URL, with the HTTP validators (`ETag`, `Last-Modified`) a conditional refetch
/// sends; a CRL is offered to the revocation rule by its issuer's name. Nothing here fetches: the rule
/// runs inside path building and never waits on the network (RFC 5280 §6.3 decides from the CRLs at hand).
/// Bounded: at most `capacity` URLs; storing one more forgets the entry used longest ago.
public final class CRLCache: @unchecked Sendable, Hashable {
    /// What is kept for one URL.
    public struct Entry: Sendable, Hashable {
        /// The CRLs the URL served (usually one).
        public var crls: [CertificateRevocationList]
        /// The response's `ETag`, for `If-None-Match`.
        public var entityTag: String?
        /// The response's `Last-Modified`, for `If-Modified-Since`.
        public var lastModified: String?
        /// When it was stored.
        public var storedAt: Date
        /// Why the last fetch failed (then ``crls`` holds what an earlier fetch got, if anything).
        public var failure: String?

        /// An entry.
        public init(crls: [CertificateRevocationList], entityTag: String? = nil, lastModified: String? = nil, storedAt: Date = Date(), failure: String? = nil) {
            self.crls = crls
            self.entityTag = entityTag
            self.lastModified = lastModified
            self.storedAt = storedAt
            self.failure = failure
        }

        /// Whether every CRL is current at `time` (`thisUpdate` ≤ time ≤ `nextUpdate`): no need to fetch again.
        public func isFresh(at time: Date) -> Bool {
            !crls.isEmpty && crls.allSatisfy { crl in crl.thisUpdate <= time && (crl.nextUpdate.map { time <= $0 } ?? false) }
        }
    }

    /// The most URLs kept.
    package let capacity: Int
    private let lock = Lock()
    private var byURL = LRUDictionary<String, Entry>()

    /// An empty cache.
    public init(capacity: Int = 256) {
        self.capacity = max(1, capacity)
    }

    /// The entry for `url`, if any.
    public func entry(for url: String) -> Entry? {
        lock.withLock { byURL.use(url) }
    }

    /// Stores (or replaces) the entry for `url`.
    public func store(_ entry: Entry, for url: String) {
        lock.withLock { byURL.set(url, entry, capacity: capacity) }
    }

    /// Every kept CRL issued under `issuer`'s name.
    package func crls(issuedBy issuer: DistinguishedName) -> [CertificateRevocationList] {
        lock.withLock { byURL.values.flatMap { $0.crls.filter { $0.issuer == issuer } } }
    }

    /// Forgets everything.
    package func removeAll() {
        lock.withLock { byURL = LRUDictionary() }
    }

    /// Caches are equal only to themselves.
    public static func == (lhs: CRLCache, rhs: CRLCache) -> Bool { lhs === rhs }
    /// Hashes the identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// OCSP responses obtained while the process runs — fetched from responders, or stapled — shared by the evaluations
/// that consult it (``RevocationPolicy/ocspCache``) and by whoever fills it.
///
/// Entries are kept per certificate (its issuer's name and its serial number); the revocation rule checks each
/// response against the issuer on the validated path before believing it, so a response stored under the wrong
/// certificate decides nothing. Nothing here fetches. Bounded: at most `capacity` certificates; storing one more
/// forgets the entry used longest ago.
public final class OCSPCache: @unchecked Sendable, Hashable {
    /// What is kept for one certificate.
    public struct Entry: Sendable, Hashable {
        /// The last response received (a failure keeps the one before, if any).
        public var response: OCSPResponse?
        /// The responder it came from.
        package var responder: String?
        /// The nonce sent with the request, checked against the response's.
        public var nonce: [UInt8]?
        /// When it was stored.
        public var storedAt: Date
        /// Why the last query failed.
        public var failure: String?

        /// An entry.
        public init(response: OCSPResponse?, responder: String? = nil, nonce: [UInt8]? = nil, storedAt: Date = Date(), failure: String? = nil) {
            self.response = response
            self.responder = responder
            self.nonce = nonce
            self.storedAt = storedAt
            self.failure = failure
        }

        /// Whether the response says good or revoked for `certificate` and is current at `time` (its signature not yet
        /// checked — the rule does that against the validated path): no need to ask again.
        public func isDefinitive(for certificate: Certificate, at time: Date) -> Bool {
            guard let response, response.status == .successful else { return false }
            let serial = Array(certificate.serialNumber.bytes.drop(while: { $0 == 0 }))
            return response.responses.contains { single in
                guard single.certificateID?.serialNumber == serial, single.status != .unknown else { return false }
                let until = single.nextUpdate ?? single.thisUpdate + OCSPResponse.maximumAgeWithoutNextUpdate
                return single.thisUpdate <= time + OCSPResponse.clockSkewTolerance && time <= until
            }
        }
    }

    private struct Key: Hashable {
        let issuer: DistinguishedName
        let serial: SerialKey
        init(_ certificate: Certificate) {
            issuer = certificate.issuer
            serial = SerialKey(magnitude: certificate.serialNumber.bytes[...])
        }
    }

    /// The most certificates kept.
    package let capacity: Int
    private let lock = Lock()
    private var entries = LRUDictionary<Key, Entry>()

    /// An empty cache.
    public init(capacity: Int = 4096) {
        self.capacity = max(1, capacity)
    }

    /// The entry for `certificate`, if any.
    public func entry(for certificate: Certificate) -> Entry? {
        let key = Key(certificate)
        return lock.withLock { entries.use(key) }
    }

    /// Stores (or replaces) the entry for `certificate`.
    public func store(_ entry: Entry, for certificate: Certificate) {
        let key = Key(certificate)
        lock.withLock { entries.set(key, entry, capacity: capacity) }
    }

    /// Forgets everything.
    package func removeAll() {
        lock.withLock { entries = LRUDictionary() }
    }

    /// Caches are equal only to themselves.
    public static func == (lhs: OCSPCache, rhs: OCSPCache) -> Bool { lhs === rhs }
    /// Hashes the identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

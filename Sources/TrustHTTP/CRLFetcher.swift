import HTTPTypes
import NIOConcurrencyHelpers
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Fetches the CRLs that certificates name in their CRL Distribution Points (RFC 5280 §4.2.1.13), over HTTP with
/// a ``TrustHTTPClient`` of its own, into a `CRLCache` that revocation checking consults (`RevocationPolicy.cache`).
///
/// - **Cached by URL** until the CRL's `nextUpdate`; once stale it is asked for again with `If-None-Match` /
///   `If-Modified-Since` (a `304` keeps what is cached — still stale, so still not used).
/// - **Bounded**: a response body over `Limits/maximumSize` or a fetch over `Limits/timeout` fails; at most
///   one fetch per URL is in flight (concurrent evaluations wait for the same one); a failure is remembered for
///   `Limits/retryAfterFailure` before that URL is tried again, and it is named in the decision.
/// - **Never on an event loop**: fetching happens in `prefetch(for:depth:at:)`, before path building; the
///   revocation rule itself only reads the cache.
/// - Only `http` and `https` URIs are fetched (`ldap:` and others are skipped); no credential is ever sent,
///   redirects stay within `Limits/maximumRedirects`. The fetching session checks no revocation itself.
public final class CRLFetcher: Sendable {
    /// Bounds on fetching.
    package struct Limits: Sendable, Hashable {
        /// The largest CRL accepted, in bytes (default 10 MiB).
        package var maximumSize: Int
        /// The longest one fetch may take (default 10 s).
        package var timeout: Duration
        /// How long a failed URL is not tried again (default 60 s).
        package var retryAfterFailure: TimeInterval
        /// Redirects followed (default 3).
        package var maximumRedirects: Int

        /// Limits; the defaults suit CRLs of public CAs.
        package init(maximumSize: Int = 10 << 20, timeout: Duration = .seconds(10), retryAfterFailure: TimeInterval = 60, maximumRedirects: Int = 3) {
            self.maximumSize = maximumSize
            self.timeout = timeout
            self.retryAfterFailure = retryAfterFailure
            self.maximumRedirects = maximumRedirects
        }
    }

    /// Where fetched CRLs are kept.
    package let cache: CRLCache
    /// The bounds on fetching.
    package let limits: Limits
    private let session: TrustHTTPClient
    private let inFlight = NIOLockedValueBox<[String: Task<Void, Never>]>([:])

    /// A fetcher filling `cache`; `configuration` is the fetching session's (its trust settings apply to `https` CRL
    /// URLs; `resolve` maps names to addresses as curl's `--resolve`).
    package init(cache: CRLCache = CRLCache(), configuration: TrustHTTPClientConfiguration = TrustHTTPClientConfiguration(), limits: Limits = Limits()) throws {
        var configuration = configuration
        configuration.maximumRedirects = limits.maximumRedirects
        configuration.requestTimeout = limits.timeout
        self.session = try TrustHTTPClient(configuration: configuration)
        self.cache = cache
        self.limits = limits
    }

    /// The `http`/`https` distribution-point URIs of `chain`'s certificates in scope: the leaf, or every certificate.
    package static func uris(for chain: [Certificate], depth: RevocationPolicy.Depth) -> [String] {
        let certificates = depth == .leaf ? Array(chain.prefix(1)) : chain
        var seen = Set<String>()
        return certificates.flatMap(CRLDistributionPoints.fetchableURIs(of:)).filter { seen.insert($0).inserted }
    }

    /// Whether every URI `prefetch` would fetch already has a current answer (fresh CRLs, or a recent failure).
    package func isSettled(for chain: [Certificate], depth: RevocationPolicy.Depth, at time: Date) -> Bool {
        Self.uris(for: chain, depth: depth).allSatisfy { settled(cache.entry(for: $0), at: time) }
    }

    /// Fetches what `chain`'s certificates in scope name and the cache does not hold current, and waits for it.
    package func prefetch(for chain: [Certificate], depth: RevocationPolicy.Depth, at time: Date) async {
        let tasks = Self.uris(for: chain, depth: depth).compactMap { uri -> Task<Void, Never>? in
            guard !settled(cache.entry(for: uri), at: time) else { return nil }
            return inFlight.withLockedValue { running in
                if let task = running[uri] { return task }
                // Checked again under the lock: a fetch stores its result before it leaves `inFlight`, so one that
                // just finished is seen here and not repeated.
                if settled(cache.entry(for: uri), at: time) { return nil }
                let task = Task { await self.fetch(uri, at: time) }
                running[uri] = task
                return task
            }
        }
        for task in tasks { await task.value }
    }

    /// Shuts the fetching session down.
    package func shutdown() async {
        await session.shutdown()
    }

    private func settled(_ entry: CRLCache.Entry?, at time: Date) -> Bool {
        guard let entry else { return false }
        if entry.failure != nil { return Date().timeIntervalSince(entry.storedAt) < limits.retryAfterFailure }
        return entry.isFresh(at: time)
    }

    private func fetch(_ uri: String, at time: Date) async {
        defer { _ = inFlight.withLockedValue { $0.removeValue(forKey: uri) } }
        let previous = cache.entry(for: uri)
        guard let url = URL(string: uri) else {
            cache.store(CRLCache.Entry(crls: [], failure: "not a URL"), for: uri)
            return
        }
        var headers: HTTPFields = [.accept: "application/pkix-crl, application/x-pkcs7-crl, */*"]
        if let tag = previous?.entityTag {
            headers[.ifNoneMatch] = tag
        } else if let modified = previous?.lastModified {
            headers[.ifModifiedSince] = modified
        }
        var request = TrustHTTPClientRequest(url: url, headers: headers, timeout: limits.timeout)
        request.maximumResponseBodySize = limits.maximumSize
        var entry = CRLCache.Entry(crls: previous?.crls ?? [], entityTag: previous?.entityTag, lastModified: previous?.lastModified)
        do {
            let response = try await session.data(for: request)
            switch response.statusCode {
            case 200:
                entry.crls = try CertificateRevocationList.parseAll(Array(response.body.readableBytesView))
                entry.entityTag = response.headers[.eTag]
                entry.lastModified = response.headers[.lastModified]
            case 304 where previous != nil:
                break
            default:
                entry.failure = "HTTP status \(response.statusCode)"
            }
        } catch let error as TrustHTTPClientError {
            entry.failure = "\(error.code): \(error.message)"
        } catch {
            entry.failure = "\(error)"
        }
        cache.store(entry, for: uri)
    }
}

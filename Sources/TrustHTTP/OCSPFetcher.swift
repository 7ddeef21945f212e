import HTTPTypes
import NIOConcurrencyHelpers
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Asks OCSP responders (RFC 6960, the certificates' authorityInformationAccess id-ad-ocsp URIs) about certificates,
/// over HTTP with a ``TrustHTTPClient`` of its own, into an `OCSPCache` that revocation checking consults
/// (`RevocationPolicy.ocspCache`).
///
/// - **The request** (RFC 6960 §4.1, RFC 5019): one CertID hashed with SHA-256 by default; when the responder
///   answers `malformedRequest` or `unauthorized`, the same question again with SHA-1 (RFC 5019 §2.1.1 makes SHA-1
///   the one hash every responder supports), and that responder is asked with SHA-1 from then on. Sent as `GET` with
///   the base64 request in the path when that is under 255 bytes (RFC 5019 §5, cacheable by the responder's CDN),
///   else as `POST`. A nonce (RFC 8954) only when ``Options/nonce`` is set; then always `POST`.
/// - **Cached per certificate** until the response's `nextUpdate`; a failure is remembered for
///   ``Limits/retryAfterFailure`` and named in the decision.
/// - **Bounded**: a response over ``Limits/maximumSize`` or a query over ``Limits/timeout`` fails; one query per
///   certificate is in flight at a time. Never on an event loop: the revocation rule only reads the cache.
/// - The response is believed only after the rule checks it against the validated path (signer, times, nonce).
public final class OCSPFetcher: Sendable {
    /// Bounds on querying.
    public struct Limits: Sendable, Hashable {
        /// The largest response accepted, in bytes (default 64 KiB; responses are a few kilobytes).
        public var maximumSize: Int
        /// The longest one query may take (default 5 s).
        public var timeout: Duration
        /// How long a failed query is not repeated (default 60 s).
        public var retryAfterFailure: TimeInterval

        /// Limits; the defaults suit public CAs' responders.
        public init(maximumSize: Int = 64 << 10, timeout: Duration = .seconds(5), retryAfterFailure: TimeInterval = 60) {
            self.maximumSize = maximumSize
            self.timeout = timeout
            self.retryAfterFailure = retryAfterFailure
        }
    }

    /// How requests are made.
    public struct Options: Sendable, Hashable {
        /// Send a random 32-octet nonce (RFC 8954) and refuse a response that echoes another (default off: RFC 5019
        /// responders answer from pre-produced responses and ignore nonces).
        public var nonce: Bool
        /// The CertID hash asked with first (default SHA-256).
        public var hashAlgorithm: OCSPCertificateID.HashAlgorithm

        /// Options.
        public init(nonce: Bool = false, hashAlgorithm: OCSPCertificateID.HashAlgorithm = .sha256) {
            self.nonce = nonce
            self.hashAlgorithm = hashAlgorithm
        }
    }

    /// Where responses are kept.
    package let cache: OCSPCache
    /// The bounds.
    public let limits: Limits
    /// How requests are made.
    public let options: Options
    private let session: TrustHTTPClient
    private let inFlight = NIOLockedValueBox<[[UInt8]: Task<Void, Never>]>([:])
    /// Responders that refused a SHA-256 CertID and were answered with SHA-1.
    private let sha1Responders = NIOLockedValueBox<Set<String>>([])

    /// A fetcher filling `cache`; `configuration` is the querying session's.
    public init(
        cache: OCSPCache = OCSPCache(), configuration: TrustHTTPClientConfiguration = TrustHTTPClientConfiguration(), limits: Limits = Limits(),
        options: Options = Options()
    ) throws {
        var configuration = configuration
        configuration.maximumRedirects = 0
        configuration.requestTimeout = limits.timeout
        self.session = try TrustHTTPClient(configuration: configuration)
        self.cache = cache
        self.limits = limits
        self.options = options
    }

    /// Whether every one of `certificates` that names a responder has a current answer kept (good or revoked, not yet
    /// stale), or a recent failure or unusable answer.
    package func isSettled(for certificates: [Certificate], at time: Date) -> Bool {
        certificates.allSatisfy { certificate in
            OCSPRequest.responderURIs(of: certificate).isEmpty || settled(cache.entry(for: certificate), certificate, at: time)
        }
    }

    /// Asks about each (certificate, issuer) pair whose certificate names a responder and has no current answer, and
    /// waits for the answers.
    package func prefetch(_ pairs: [(certificate: Certificate, issuer: Certificate)], at time: Date) async {
        let tasks = pairs.compactMap { pair -> Task<Void, Never>? in
            let uris = OCSPRequest.responderURIs(of: pair.certificate)
            guard let uri = uris.first, !settled(cache.entry(for: pair.certificate), pair.certificate, at: time) else { return nil }
            let key = Array(pair.certificate.serialNumber.bytes) + Array(String(describing: pair.certificate.issuer).utf8)
            return inFlight.withLockedValue { running in
                if let task = running[key] { return task }
                // Checked again under the lock: a query stores its answer before it leaves `inFlight`, so one that
                // just finished is seen here and not repeated.
                if settled(cache.entry(for: pair.certificate), pair.certificate, at: time) { return nil }
                let task = Task { await self.query(uri, about: pair.certificate, issuer: pair.issuer) }
                running[key] = task
                return task
            }
        }
        for task in tasks { await task.value }
    }

    /// Shuts the querying session down.
    package func shutdown() async {
        await session.shutdown()
    }

    private func settled(_ entry: OCSPCache.Entry?, _ certificate: Certificate, at time: Date) -> Bool {
        guard let entry else { return false }
        if entry.failure != nil || entry.response.map({ !$0.isSuccessful }) == true {
            return Date().timeIntervalSince(entry.storedAt) < limits.retryAfterFailure
        }
        return entry.isDefinitive(for: certificate, at: time) || Date().timeIntervalSince(entry.storedAt) < limits.retryAfterFailure
    }

    private func query(_ uri: String, about certificate: Certificate, issuer: Certificate) async {
        let key = Array(certificate.serialNumber.bytes) + Array(String(describing: certificate.issuer).utf8)
        defer { _ = inFlight.withLockedValue { $0.removeValue(forKey: key) } }
        let previous = cache.entry(for: certificate)
        var algorithm = sha1Responders.withLockedValue { $0.contains(uri) } ? .sha1 : options.hashAlgorithm
        var entry = OCSPCache.Entry(response: previous?.response, responder: uri)
        while true {
            let nonce = options.nonce ? OCSPRequest.randomNonce() : nil
            do {
                let id = try OCSPCertificateID(certificate: certificate, issuer: issuer, hashAlgorithm: algorithm)
                let response = try await send(OCSPRequest(certificateIDs: [id], nonce: nonce), to: uri)
                if [.malformedRequest, .unauthorized].contains(response.status) && algorithm != .sha1 {
                    algorithm = .sha1
                    sha1Responders.withLockedValue { _ = $0.insert(uri) }
                    continue
                }
                entry.response = response
                entry.nonce = nonce
                if response.status != .successful { entry.failure = "the responder answered \(response.status)" }
            } catch let error as TrustHTTPClientError {
                entry.failure = "\(error.code): \(error.message)"
            } catch let error as OCSPParseError {
                entry.failure = "\(error)"
            } catch {
                entry.failure = "\(error)"
            }
            break
        }
        cache.store(entry, for: certificate)
    }

    /// One exchange: `GET` when the encoded request is short and carries no nonce, else `POST`.
    private func send(_ request: OCSPRequest, to uri: String) async throws -> OCSPResponse {
        let der = try request.derBytes()
        // RFC 6960 Appendix A.1: the base64 of the DER, URL-encoded; of base64's alphabet only `+`, `/` and `=` need it.
        let encoded = Data(der).base64EncodedString().replacing("+", with: "%2B").replacing("/", with: "%2F").replacing("=", with: "%3D")
        let base = uri.hasSuffix("/") ? uri : uri + "/"
        let message: TrustHTTPClientRequest
        if request.nonce == nil, base.utf8.count + encoded.utf8.count < 255, let url = URL(string: base + encoded) {
            message = TrustHTTPClientRequest(url: url, headers: [.accept: "application/ocsp-response"], timeout: limits.timeout)
        } else {
            guard let url = URL(string: uri) else { throw FetchFailure(text: "the responder URI is not a URL") }
            message = TrustHTTPClientRequest(
                url: url, method: "POST", headers: [.contentType: "application/ocsp-request", .accept: "application/ocsp-response"],
                body: .bytes(der), timeout: limits.timeout)
        }
        var bounded = message
        bounded.maximumResponseBodySize = limits.maximumSize
        let response = try await session.data(for: bounded)
        guard response.statusCode == 200 else { throw FetchFailure(text: "HTTP status \(response.statusCode)") }
        return try OCSPResponse(derEncoded: Array(response.body.readableBytesView))
    }

    private struct FetchFailure: Error, CustomStringConvertible {
        let text: String
        var description: String { text }
    }
}

extension OCSPResponse {
    fileprivate var isSuccessful: Bool { status == .successful }
}

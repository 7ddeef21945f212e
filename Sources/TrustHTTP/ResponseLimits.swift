/// How much a server may send before a ``TrustHTTPClient`` gives up on a response: every resource a
/// response can make the client hold is bounded, so a hostile or broken server (an endless body,
/// megabytes of headers, an endless run of `100 Continue`) fails one request with a typed
/// ``TrustHTTPClientError`` (``TrustHTTPClientError/Code/responseTooLarge`` and the ``ResponseLimit`` that was
/// exceeded) instead of growing the process.
///
/// The head limits follow curl's (300 KiB of response headers in all, 100 KiB per field); they
/// apply to HTTP/1.1 heads (counted on the bytes as they arrive, before any parsing), to a proxy's
/// answer to `CONNECT`, and to HTTP/2 header lists (advertised as `SETTINGS_MAX_HEADER_LIST_SIZE`,
/// RFC 9113 §6.5.2, and enforced while decoding, CONTINUATION frames included).
public struct ResponseLimits: Sendable, Hashable {
    /// The largest body that ``TrustHTTPClient/data(for:)`` (and every API that collects a body) holds:
    /// 64 MiB by default. A response announcing more (`Content-Length`) fails before its body is
    /// read; one that sends more fails as soon as it does, and its connection is closed.
    /// ``TrustHTTPClientRequest/maximumResponseBodySize`` overrides it per request. Streaming
    /// (``TrustHTTPClient/bytes(for:)``) is not limited: its reader holds at most about 512 KiB
    /// (backpressure) and decides itself how much it takes.
    public var maximumBodySize: Int = 64 << 20
    /// The largest response head: status line, header fields and line ends (300 KiB, curl's limit).
    public var maximumHeadSize: Int = 300 << 10
    /// The largest single header field line, name and value (100 KiB, curl's limit).
    public var maximumHeaderFieldSize: Int = 100 << 10
    /// The most header fields in one response head.
    public var maximumHeaderFields: Int = 1_000
    /// The most interim (1xx) responses before the final one (RFC 9110 §15.2 allows several; none
    /// needs many).
    public var maximumInformationalResponses: Int = 100

    /// The defaults above.
    public init() {}
}

/// Which limit a response exceeded, by how much (see ``ResponseLimits``).
public struct ResponseLimit: Sendable, Hashable, CustomStringConvertible {
    /// The quantity that was bounded.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Body bytes collected (``ResponseLimits/maximumBodySize``).
        case body
        /// Bytes of the whole head (``ResponseLimits/maximumHeadSize``).
        case headSize = "head-size"
        /// Bytes of one header field line (``ResponseLimits/maximumHeaderFieldSize``).
        case headerFieldSize = "header-field-size"
        /// Header fields in the head (``ResponseLimits/maximumHeaderFields``).
        case headerFields = "header-fields"
        /// Interim 1xx responses (``ResponseLimits/maximumInformationalResponses``).
        case informationalResponses = "informational-responses"
        /// Decompressed bytes per compressed byte (``ResponseDecompression/maximumRatio``). Reading
        /// stops at the first 16 KiB of output over the limit, so `observed` is `limit + 1`: the body
        /// inflated to more than `limit` times its compressed size.
        case decompressionRatio = "decompression-ratio"
    }

    /// The quantity that was bounded.
    public var kind: Kind
    /// How much was seen when the response was refused (at least `limit + 1`; reading stops there).
    public var observed: Int
    /// The limit in force.
    public var limit: Int
    /// Whether the answer was a proxy's reply to `CONNECT` rather than the origin's response.
    public var fromProxy: Bool

    /// A limit exceeded.
    package init(_ kind: Kind, observed: Int, limit: Int, fromProxy: Bool = false) {
        self.kind = kind
        self.observed = observed
        self.limit = limit
        self.fromProxy = fromProxy
    }

    /// `response headers too large: 312358 > 307200 bytes`.
    public var description: String {
        let what: String
        switch kind {
        case .body: what = "response body too large"
        case .headSize: what = "response headers too large"
        case .headerFieldSize: what = "response header field too large"
        case .headerFields: what = "too many response header fields"
        case .informationalResponses: what = "too many interim (1xx) responses"
        case .decompressionRatio:
            return "decompressed response body more than \(limit) times its compressed size"
        }
        let unit = kind == .headerFields || kind == .informationalResponses ? "" : " bytes"
        return (fromProxy ? "proxy CONNECT reply: " : "") + "\(what): \(observed) > \(limit)\(unit)"
    }
}

/// Raised inside a connection's pipeline when a response exceeds a ``ResponseLimit``; the
/// ``TrustHTTPClient`` turns it into ``TrustHTTPClientError/Code/responseTooLarge``.
struct ResponseLimitExceeded: Error, CustomStringConvertible {
    var limit: ResponseLimit
    var description: String { limit.description }
}

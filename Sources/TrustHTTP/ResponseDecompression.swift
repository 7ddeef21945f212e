/// Whether a ``TrustHTTPClient`` asks for compressed responses and decompresses them (curl's
/// `--compressed`), and how far a body may inflate.
///
/// Enabled, every request without its own `Accept-Encoding` field gets `Accept-Encoding: deflate,
/// gzip`, and a response whose `Content-Encoding` is `gzip` or `deflate` (RFC 9110 §8.4.1) is
/// delivered decompressed; its header fields are left as the server sent them. Decompression is
/// swift-nio-extras' `NIOHTTPResponseDecompressor` (zlib).
///
/// The decompressed bytes are the body: they count against ``ResponseLimits/maximumBodySize`` and
/// ``TrustHTTPClientRequest/maximumResponseBodySize``. And a body that inflates to more than ``maximumRatio`` times
/// the compressed bytes read so far fails at once with ``TrustHTTPClientError/Code/responseTooLarge``
/// (``ResponseLimit/Kind/decompressionRatio``), so a "zip bomb" (10 GB of zeros in 10 MB) never
/// gets far even where no body limit applies, as when streaming with ``TrustHTTPClient/bytes(for:)``. A
/// body that is not valid gzip or deflate fails with ``TrustHTTPClientError/Code/cannotDecodeContentData``.
///
/// Disabled by default, like AsyncHTTPClient: responses are delivered as sent.
public struct ResponseDecompression: Sendable, Hashable {
    /// Whether responses are requested compressed and decompressed.
    public var isEnabled: Bool
    /// The most decompressed bytes per compressed byte (100 by default: text compresses 3–20 times;
    /// deflate's own maximum is about 1,032).
    public var maximumRatio: Int

    /// Responses as sent.
    public static let disabled = ResponseDecompression(isEnabled: false, maximumRatio: 100)

    /// gzip and deflate responses decompressed, at most `maximumRatio` times their compressed size.
    public static func enabled(maximumRatio: Int = 100) -> ResponseDecompression {
        ResponseDecompression(isEnabled: true, maximumRatio: max(1, maximumRatio))
    }
}

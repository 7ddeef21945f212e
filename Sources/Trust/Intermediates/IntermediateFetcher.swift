#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Fetches what a certificate's Authority Information Access names as its issuer (the `caIssuers` location, RFC
/// 5280 §4.2.2.1), for ``IntermediateFetchingEvaluator``: the engine decides what to fetch and judges what comes
/// back; a conformer only moves bytes.
///
/// TrustHTTP's client implements it over HTTP/1.1, through the request's proxy, with a cache that honours HTTP
/// caching. A conformer of one's own must:
/// - fetch only the URL given (always `http`: the engine never asks for another scheme), without credentials;
/// - stop reading after `maximumSize` bytes and throw (an answer that does not end is bounded in memory);
/// - return or throw by `deadline` (the engine stops waiting then in any case, and cancels the call).
public protocol IntermediateFetcher: Sendable {
    /// The body found at `url`, at most `maximumSize` bytes, by `deadline`.
    func fetch(_ url: URL, maximumSize: Int, deadline: ContinuousClock.Instant) async throws -> [UInt8]
}

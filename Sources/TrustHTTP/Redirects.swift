import HTTPTypes
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Redirect rules: 301/302/303/307/308 with a Location; 303 (and 301/302 after a POST) becomes a
/// GET without a body; credentials and cookies are never carried to another origin.
enum Redirects {
    static let statuses: Set<Int> = [301, 302, 303, 307, 308]
    /// Headers dropped when a redirect leaves the origin.
    static let originBound: Set<HTTPField.Name> = [.authorization, .proxyAuthorization, .cookie]

    /// The request that follows `response`, nil when it is no redirect (or its `Location` is not a
    /// URL: the response is then the answer). A redirect to any scheme but `http`/`https` (`file:`,
    /// `ftp:`, `data:`, `javascript:` …) is refused — a server must never make the client read a local
    /// file or speak another protocol (curl refuses the same, "Protocol … not supported").
    static func next(after response: TrustHTTPClientStreamingResponse, for request: TrustHTTPClientRequest) throws -> TrustHTTPClientRequest? {
        guard statuses.contains(response.statusCode), let location = response.headers[.location],
            let target = URL(string: location, relativeTo: request.url)?.absoluteURL
        else { return nil }
        guard let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            response.body.abandon()
            throw TrustHTTPClientError(
                .unsupportedURL, "refused a redirect to a \(target.scheme.map { "\($0): " } ?? "")URL (only http and https are followed)", url: request.url)
        }
        var next = request
        next.url = target
        let method = request.method.uppercased()
        if response.statusCode == 303 && method != "HEAD" || (response.statusCode == 301 || response.statusCode == 302) && method == "POST" {
            next.method = "GET"
            next.body = nil
            next.removeHeaders(named: [.contentLength, .contentType])
        }
        if Origin(target) != Origin(request.url) {
            next.removeHeaders(named: originBound)
        }
        return next
    }
}

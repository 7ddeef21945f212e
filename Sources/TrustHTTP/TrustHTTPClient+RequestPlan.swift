import HTTPTypes
import NIOHTTP1

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a send needs before any connection (``InFlightRequest/Plan``): the request checked, its route and
/// pool key, and its head as it goes on the wire.
extension TrustHTTPClient {
    /// The first send of `original`. Not inlined, as ``nextSend(_:after:redirected:authenticator:)``: inlined into
    /// `send`, the requests they build took room in its frame (measured: "Frame sizes" in RequestFlow.md).
    @inline(never)
    func firstSend(of original: TrustHTTPClientRequest, context: RequestContext, authenticator: inout HTTPAuthenticator) throws -> InFlightRequest {
        InFlightRequest(
            original: original, context: context, redirects: [], unprepared: original, plan: try plan(for: original, authenticator: &authenticator))
    }

    /// The send of `unprepared` that follows `previous`, which was answered with a redirect (`redirected`) or
    /// otherwise (a retry without `Expect`, an answer to a challenge).
    @inline(never)
    func nextSend(_ unprepared: TrustHTTPClientRequest, after previous: InFlightRequest, redirected: Bool, authenticator: inout HTTPAuthenticator) throws
        -> InFlightRequest
    {
        InFlightRequest(
            original: previous.original, context: previous.context,
            redirects: redirected ? previous.redirects + [previous.unprepared.url] : previous.redirects, unprepared: unprepared,
            plan: try plan(for: unprepared, authenticator: &authenticator))
    }

    /// The plan of a send of `unprepared` with `authenticator`'s credentials: its origin (once the request is
    /// known to be sendable), route, proxy, pool key and head.
    private func plan(for unprepared: TrustHTTPClientRequest, authenticator: inout HTTPAuthenticator) throws -> InFlightRequest.Plan {
        let request = authenticator.prepare(unprepared)
        let origin = try Self.validate(request)
        let route = router.route(for: origin)
        let taskScoped = request.challengeHandler != nil && origin.isSecure
        let proxy = try router.proxyOrFailure(for: origin, url: request.url)
        return InFlightRequest.Plan(
            request: request, origin: origin, route: route, taskScoped: taskScoped, alone: request.challengeHandler == nil && sessionHandler == nil,
            proxy: proxy,
            key: PoolKey(origin: origin, trustKey: taskScoped ? "task:" + UUID().uuidString : route.key, proxy: proxy?.description),
            head: makeHead(for: request, origin: origin, absoluteForm: proxy != nil && !origin.isSecure),
            body: ExchangeBody(request.body), continueTimeout: request.waitsForContinue ? configuration.continueTimeout : nil)
    }

    /// The request's origin, once its URL, method and header fields are known to be sendable.
    private static func validate(_ request: TrustHTTPClientRequest) throws -> Origin {
        // Before the origin: Foundation reads an overflowing port as none, which would be the default port.
        do {
            _ = try InvalidPort.port(of: request.url)
        } catch {
            throw TrustHTTPClientError(.badURL, "\(error): cannot request \(request.url.redactingPassword)", url: request.url, underlyingError: error)
        }
        guard let origin = Origin(request.url) else {
            let scheme = request.url.scheme?.lowercased()
            throw TrustHTTPClientError(
                scheme == "http" || scheme == "https" ? .badURL : .unsupportedURL, "cannot request \(request.url.redactingPassword)", url: request.url)
        }
        if let problem = Origin.nameProblem(request.url) {
            throw TrustHTTPClientError(.badURL, "the host name is not valid: \(problem)", url: request.url)
        }
        guard !request.method.isEmpty, request.method.utf8.allSatisfy(AuthenticationHeaderParser.isTokenByte) else {
            throw TrustHTTPClientError(.badURL, "the method \(request.method.debugDescription) is not an HTTP token", url: request.url)
        }
        // RFC 9110 §5.1, §5.5: field names are tokens and values hold no CR, LF or NUL — `HTTPFields` holds no
        // other, so no field can split the request.
        return origin
    }

    /// The request head. Proxy credentials go only to a proxy that receives the request itself
    /// (absolute form): never to an origin, and never through a tunnel.
    func makeHead(for request: TrustHTTPClientRequest, origin: Origin, absoluteForm: Bool) -> HTTPRequestHead {
        let target = absoluteForm ? origin.description + Self.target(of: request.url) : Self.target(of: request.url)
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method.uppercased()), uri: target)
        // Room for every field at once (host, the request's, user-agent, accept, and a framing or expect field):
        // grown one field at a time, the list was copied twice per request.
        head.headers.reserveCapacity(request.headers.count + 5)
        head.headers.add(name: "host", value: origin.hostHeader)
        for field in request.headers where field.name.canonicalName != "host" && (absoluteForm || field.name != .proxyAuthorization) {
            head.headers.add(name: field.name.rawName, value: field.value)
        }
        if request.headers[.userAgent] == nil { head.headers.add(name: "user-agent", value: configuration.userAgent) }
        if request.headers[.accept] == nil { head.headers.add(name: "accept", value: "*/*") }
        if let body = request.body {
            if let length = body.length {
                head.headers.replaceOrAdd(name: "content-length", value: String(length))
            } else {
                // Of unknown length: chunked over HTTP/1.1 (RFC 9112 §7.1); HTTP/2 drops the field
                // and ends the stream instead (RFC 9113 §8.2.2).
                head.headers.remove(name: "content-length")
                head.headers.replaceOrAdd(name: "transfer-encoding", value: "chunked")
            }
            if request.waitsForContinue { head.headers.replaceOrAdd(name: "expect", value: "100-continue") }
        } else if ["POST", "PUT", "PATCH"].contains(head.method.rawValue) {
            head.headers.replaceOrAdd(name: "content-length", value: "0")
        }
        return head
    }

    /// The request target: path and query, percent-encoded as in the URL.
    static func target(of url: URL) -> String {
        let path = url.path(percentEncoded: true)
        var target = path.isEmpty ? "/" : path
        if let query = url.query(percentEncoded: true) { target += "?" + query }
        return target
    }
}

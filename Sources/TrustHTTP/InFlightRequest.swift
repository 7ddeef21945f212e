import NIOHTTP1

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One send of a request — the request as sent and its plan — with what the request carries from its earlier
/// sends: the request the caller gave, its deadlines and span, and the URLs it was redirected from. A retry without
/// `Expect`, an answer to a challenge and a redirect are each a new send, made from the last one
/// (`TrustHTTPClient.nextSend`); nothing in one changes.
///
/// The session's functions take this one reference rather than the plan, request, redirects and context one by
/// one, and its members are constants: a waiting request's task holds one pointer per frame for all of them, and
/// reads a member in place rather than copying it into its frame (see "Frame sizes" in the "How a request flows"
/// article).
final class InFlightRequest {
    /// The request as the caller gave it (with the trace headers of its span).
    let original: TrustHTTPClientRequest
    /// Its deadlines, whether one fired, and its span: the same across every send.
    let context: RequestContext
    /// The URLs this request was redirected from before this send, first to last (the response carries them).
    let redirects: [URL]
    /// The request of this send before the authenticator's credentials (what a redirect or a retry starts from).
    let unprepared: TrustHTTPClientRequest
    /// What this send needs before any connection, and its request as sent.
    let plan: Plan

    /// The URL of this send.
    var url: URL { plan.request.url }

    init(original: TrustHTTPClientRequest, context: RequestContext, redirects: [URL], unprepared: TrustHTTPClientRequest, plan: Plan) {
        self.original = original
        self.context = context
        self.redirects = redirects
        self.unprepared = unprepared
        self.plan = plan
    }

    /// What a send needs before any connection: its origin and route, the pool key, the head.
    struct Plan {
        /// The request as it is sent (with the authenticator's credentials).
        let request: TrustHTTPClientRequest
        let origin: Origin
        let route: SessionRouter.Route
        /// A task-level handler answers this request's challenges: its connection is its own.
        let taskScoped: Bool
        /// No handler to ask: default handling decides alone (a cached decision may answer in the handshake).
        let alone: Bool
        let proxy: ProxyConfiguration?
        let key: PoolKey
        let head: HTTPRequestHead
        let body: ExchangeBody
        /// How long the body waits for `100 Continue` (nil: sent with the head).
        let continueTimeout: Duration?
    }
}

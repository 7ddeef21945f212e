import Foundation
import NIOHTTP1

/// One request from the caller's call to its response, as the session sends it: the request the caller gave,
/// its deadlines and span, the URLs it was redirected from, and the send in progress — the request as sent and
/// its plan. Each send (a retry without `Expect`, an answer to a challenge, a redirect) replaces the last one.
///
/// The session's functions take this one reference rather than the plan, request, redirects and context one by
/// one: a waiting request's task then holds one pointer per frame for all of them (see "Frame sizes" in the
/// "How a request flows" article).
final class InFlightRequest {
    /// The request as the caller gave it (with the trace headers of its span).
    let original: Request
    /// Its deadlines, whether one fired, and its span: the same across every send.
    let context: RequestContext
    /// The URLs this request was redirected from, first to last (the response carries them).
    private(set) var redirects: [URL] = []
    /// The request of the send in progress, before the authenticator's credentials (what a redirect or a retry
    /// starts from).
    private(set) var unprepared: Request
    /// What the send in progress needs before any connection, and its request as sent.
    private(set) var plan: Plan

    /// The request of the send in progress as it is sent (with the authenticator's credentials).
    var request: Request { plan.request }
    /// The URL of the send in progress.
    var url: URL { plan.request.url }

    /// The first send is `original`, by `plan`.
    init(original: Request, context: RequestContext, plan: Plan) {
        self.original = original
        self.unprepared = original
        self.plan = plan
        self.context = context
    }

    /// The next send: `unprepared` (before the authenticator's credentials), by `plan`.
    func send(_ unprepared: Request, plan: Plan) {
        self.unprepared = unprepared
        self.plan = plan
    }

    /// The send in progress was answered with a redirect.
    func redirected() {
        redirects.append(unprepared.url)
    }

    /// What a send needs before any connection: its origin and route, the pool key, the head. A class: the
    /// functions of a send hold it by reference, not a copy of its head in each frame.
    final class Plan {
        /// The request as it is sent (with the authenticator's credentials).
        let request: Request
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

        init(
            request: Request, origin: Origin, route: SessionRouter.Route, taskScoped: Bool, alone: Bool, proxy: ProxyConfiguration?, key: PoolKey,
            head: HTTPRequestHead,
            body: ExchangeBody, continueTimeout: Duration?
        ) {
            self.request = request
            self.origin = origin
            self.route = route
            self.taskScoped = taskScoped
            self.alone = alone
            self.proxy = proxy
            self.key = key
            self.head = head
            self.body = body
            self.continueTimeout = continueTimeout
        }
    }
}

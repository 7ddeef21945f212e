import HTTPTypes
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One request's HTTP authentication (401 with `WWW-Authenticate`, 407 with `Proxy-Authenticate`):
/// raises each answerable challenge, strongest first, through the challenge chain, sends the
/// answer, counts failures per protection space, and stops — returning the 401/407 — once a space
/// has refused ``TrustHTTPClientConfiguration/maximumAuthenticationFailures`` + 1 credentials.
struct HTTPAuthenticator {
    enum Outcome {
        /// Send this request (the answer added).
        case retry(TrustHTTPClientRequest)
        /// The 401/407 is the final response.
        case final(TrustHTTPClientStreamingResponse)
    }

    /// The credential sent with the last request, and how.
    struct Attempt {
        var space: ProtectionSpace
        var user: String
        var password: String
        var persistence: CredentialPersistence
        var digest: DigestAuthorization?
        /// Counted towards failures when refused (false for a nonce reused from an earlier request).
        var counts: Bool
    }

    /// What authentication reads of the session's configuration — a few fields, not the whole
    /// ``TrustHTTPClientConfiguration`` (kilobytes; the authenticator is in the frame of every request's task: "Frame
    /// sizes" in the "How a request flows" article).
    struct Settings {
        let credentialStore: CredentialStore?
        let authenticationSchemes: HTTPAuthenticationSchemes
        let allowsCredentialsOverHTTP: Bool
        let maximumAuthenticationFailures: Int

        init(_ configuration: TrustHTTPClientConfiguration) {
            credentialStore = configuration.credentialStore
            authenticationSchemes = configuration.authenticationSchemes
            allowsCredentialsOverHTTP = configuration.allowsCredentialsOverHTTP
            maximumAuthenticationFailures = configuration.maximumAuthenticationFailures
        }
    }

    let configuration: Settings
    /// The session's per-host decisions (the proxy a request goes through).
    let router: SessionRouter
    let taskHandler: (any ChallengeHandler)?
    let sessionHandler: (any ChallengeHandler)?
    let digestSessions: DigestSessionCache
    /// The request's own origin and credential (request or URL): never used for another origin.
    let originalOrigin: Origin?
    let requestCredential: Credential?
    let preemptive: Bool

    private var ledger = AuthenticationLedger()
    /// The last credential refused: its protection space and scheme (`basic`, `digest`), for telemetry.
    private(set) var lastRefusal: (space: ProtectionSpace, scheme: String)?

    /// Credentials `space` has refused during this request.
    func refusals(in space: ProtectionSpace) -> Int { ledger.failureCount(in: space) }
    /// The credential sent to the origin, and to the proxy. Each is kept on the heap, in a box made
    /// afresh on every change (so the authenticator keeps value semantics): an attempt is some 250
    /// bytes, set only once a credential is sent (see `Settings` for why size matters here).
    private var origin: Attempt? {
        get { originAttempt?.attempt }
        set { originAttempt = newValue.map(AttemptBox.init) }
    }
    private var proxy: Attempt? {
        get { proxyAttempt?.attempt }
        set { proxyAttempt = newValue.map(AttemptBox.init) }
    }
    private var originAttempt: AttemptBox?
    private var proxyAttempt: AttemptBox?

    private final class AttemptBox {
        let attempt: Attempt
        init(_ attempt: Attempt) { self.attempt = attempt }
    }

    static let maximumFailureResponseBytes = 1 << 20

    init(
        request: TrustHTTPClientRequest, configuration: TrustHTTPClientConfiguration, router: SessionRouter, sessionHandler: (any ChallengeHandler)?,
        digestSessions: DigestSessionCache
    ) {
        self.configuration = Settings(configuration)
        self.router = router
        self.taskHandler = request.challengeHandler
        self.sessionHandler = sessionHandler
        self.digestSessions = digestSessions
        self.originalOrigin = Origin(request.url)
        self.requestCredential = request.credential ?? request.urlCredential
        self.preemptive = request.authenticatesPreemptively
    }

    // MARK: - Before sending

    /// Adds what can be sent before any challenge: the Digest session of this origin, or Basic
    /// when the request asked for preemptive authentication.
    mutating func prepare(_ request: TrustHTTPClientRequest) -> TrustHTTPClientRequest {
        guard let origin = Origin(request.url), request.headers[.authorization] == nil else { return request }
        var request = request
        let uri = TrustHTTPClient.target(of: request.url)
        // The Digest session of this origin answers only for the same user: this request's own
        // credential, or — when it has none — a credential the application let the session remember.
        var ownUser: (String, String)?
        if origin == originalOrigin, let credential = requestCredential, case .user(let user, let password) = credential.kind { ownUser = (user, password) }
        if let (answer, entry) = digestSessions.nextAuthorization(
            for: DigestSessionCache.key(origin), method: request.method.uppercased(), uri: uri, body: { request.body?.bytesInMemory ?? [] },
            accept: { entry in
                guard !(request.body?.isStreamed == true && entry.challenge.chosenQualityOfProtection == .authInt) else { return false }
                return ownUser.map { $0.0 == entry.user && $0.1 == entry.password } ?? (entry.persistence != .none)
            })
        {
            request.setHeader(.authorization, answer.fieldValue)
            self.origin = Attempt(space: entry.space, user: entry.user, password: entry.password, persistence: entry.persistence, digest: answer, counts: false)
        } else if preemptive, origin == originalOrigin, let credential = requestCredential, case .user(let user, let password) = credential.kind,
            origin.isSecure || configuration.allowsCredentialsOverHTTP, let basic = try? BasicAuthorization(user: user, password: password)
        {
            request.setHeader(.authorization, basic.fieldValue)
            let space = ProtectionSpace(host: origin.host, port: origin.port, scheme: origin.scheme, realm: nil, authenticationMethod: .httpBasic)
            self.origin = Attempt(space: space, user: user, password: password, persistence: credential.persistence, digest: nil, counts: true)
        }
        return request
    }

    // MARK: - After a response

    /// A response that is not a challenge: remember what worked.
    mutating func succeeded(_ response: TrustHTTPClientStreamingResponse, request: TrustHTTPClientRequest) throws {
        if let attempt = proxy, response.statusCode != 407 {
            proxy = nil
            if attempt.persistence != .none, attempt.space.realm != nil {
                try? configuration.credentialStore?.set(
                    Credential(user: attempt.user, password: attempt.password, persistence: attempt.persistence), for: attempt.space)
            }
        }
        guard let attempt = origin, let requestOrigin = Origin(request.url) else { return }
        origin = nil
        if let digest = attempt.digest {
            let info = response.headers[.authenticationInfo].map { AuthenticationHeaderParser.parameters($0).parameters } ?? []
            func parameter(_ name: String) -> String? { info.first { $0.name == name }?.value }
            if let rspauth = parameter("rspauth"), digest.verifiesServerResponse(rspauth) == false {
                throw TrustHTTPClientError(
                    .badServerResponse, "\(requestOrigin) answered with an rspauth that does not prove it knows the password", url: request.url)
            }
            digestSessions.succeeded(
                DigestSessionCache.key(requestOrigin), authorization: digest, user: attempt.user, password: attempt.password,
                space: attempt.space, persistence: attempt.persistence, nextNonce: parameter("nextnonce"))
        }
        if attempt.persistence != .none, attempt.space.realm != nil {
            try? configuration.credentialStore?.set(
                Credential(user: attempt.user, password: attempt.password, persistence: attempt.persistence), for: attempt.space)
        }
    }

    /// A 401 (or 407): the request to send next, or the final response.
    mutating func respond(to response: TrustHTTPClientStreamingResponse, request: TrustHTTPClientRequest, remaining: Duration) async throws -> Outcome {
        let isProxy = response.statusCode == 407
        guard let requestOrigin = Origin(request.url) else { return .final(response) }
        let proxyConfiguration = isProxy ? router.proxy(for: requestOrigin) : nil
        // A 407 is a proxy's only from the proxy: for https, its answer to CONNECT (an origin
        // cannot obtain proxy credentials by sending 407 through the tunnel).
        guard !isProxy || (proxyConfiguration != nil && (!requestOrigin.isSecure || response.isProxyAnswer)) else { return .final(response) }
        let challengeOrigin = proxyConfiguration?.origin ?? requestOrigin
        let parsed = AuthenticationHeaderParser.challenges(response.headers[values: isProxy ? .proxyAuthenticate : .wwwAuthenticate])
        var offers = OfferedAuthentication.rank(parsed.challenges, allowed: configuration.authenticationSchemes).offers
        guard !offers.isEmpty else {
            if !isProxy { origin = nil }
            return .final(response)
        }
        let failure = try await response.collectPrefix(limit: Self.maximumFailureResponseBytes)
        let final = TrustHTTPClientStreamingResponse(failure)
        guard ledger.beginRound() else { return .final(final) }
        if let staleRetry = settlePreviousAttempt(offers: offers, request: request, isProxy: isProxy, challengeOrigin: challengeOrigin) {
            return .retry(staleRetry)
        }
        let context = AnswerContext(
            request: request, failure: failure, isProxy: isProxy, challengeOrigin: challengeOrigin,
            clearTextAllowed: challengeOrigin.isSecure || configuration.allowsCredentialsOverHTTP,
            configuredProxyCredential: Self.userCredential(of: proxyConfiguration), remaining: remaining)
        // A CONNECT carries no body.
        let streamsBody = request.body?.isStreamed == true && !(isProxy && requestOrigin.isSecure)
        let refused = Self.strikeUnanswerable(&offers, context, streamsBody: streamsBody)
        for offer in offers {
            switch try await answer(offer, context) {
            case .next: continue
            case .outcome(.final): return .final(final)
            case .outcome(let outcome): return outcome
            }
        }
        try explainUnanswered(parsed.challenges, refusedClearText: refused.clearText, isProxy: isProxy, challengeOrigin: challengeOrigin, url: request.url)
        if refused.authInt { throw Self.authIntRefusal(challengeOrigin, url: request.url) }
        return .final(final)
    }

    /// The user and password configured for the proxy itself, if any.
    private static func userCredential(of proxy: ProxyConfiguration?) -> (String, String)? {
        proxy?.credential.flatMap {
            if case .user(let user, let password) = $0.kind { return (user, password) }
            return nil
        }
    }

    /// Strikes out the offers this request may not answer, and says which kinds were struck.
    private static func strikeUnanswerable(
        _ offers: inout [OfferedAuthentication], _ context: AnswerContext,
        streamsBody: Bool
    ) -> (clearText: Bool, authInt: Bool) {
        // Basic over plain http sends the password in clear text: not unless allowed. A credential
        // configured for the proxy itself was given to be sent to it — that one only.
        var refusedClearText = false
        if !context.clearTextAllowed && context.configuredProxyCredential == nil {
            refusedClearText = offers.contains { $0.scheme == .basic }
            offers.removeAll { $0.scheme == .basic }
        }
        // Digest auth-int hashes the whole body into the answer (RFC 7616 §3.4.3), before it is sent:
        // a body that streams is not held to be hashed.
        let refusedAuthInt = streamsBody && offers.contains { $0.digest?.chosenQualityOfProtection == .authInt }
        if streamsBody { offers.removeAll { $0.digest?.chosenQualityOfProtection == .authInt } }
        return (refusedClearText, refusedAuthInt)
    }

    /// Why a request whose body streams cannot answer Digest with `qop=auth-int` (RFC 7616 §3.4.3).
    private static func authIntRefusal(_ challengeOrigin: Origin, url: URL) -> TrustHTTPClientError {
        TrustHTTPClientError(
            .userAuthenticationRequired,
            "\(challengeOrigin) asks for Digest with qop=auth-int, which hashes the whole body into the answer; this request's body streams (send it as bytes)",
            url: url)
    }

    /// The previous answer, refused — unless its Digest nonce had only gone stale: then the request to
    /// send again with a fresh nonce. Otherwise the refusal is counted for its protection space.
    private mutating func settlePreviousAttempt(offers: [OfferedAuthentication], request: TrustHTTPClientRequest, isProxy: Bool, challengeOrigin: Origin)
        -> TrustHTTPClientRequest?
    {
        guard let attempt = isProxy ? proxy : origin else { return nil }
        if attempt.digest != nil, let fresh = offers.first(where: { $0.digest?.isStale == true && $0.realm == attempt.space.realm })?.digest,
            ledger.allowsStaleRetry()
        {
            return answer(request, digestChallenge: fresh, attempt: attempt, isProxy: isProxy)
        }
        if attempt.counts {
            var space = attempt.space
            if space.realm == nil, let basic = offers.first(where: { $0.scheme == .basic }) {
                space.realm = basic.realm  // a preemptive answer: refused for the realm the server names
            }
            ledger.recordRefusal(in: space)
            lastRefusal = (space, attempt.digest != nil ? "digest" : "basic")
        }
        if !isProxy { digestSessions.remove(DigestSessionCache.key(challengeOrigin)) }
        if isProxy { proxy = nil } else { origin = nil }
        return nil
    }

    /// What answering one round needs besides the offer.
    private struct AnswerContext {
        var request: TrustHTTPClientRequest
        var failure: TrustHTTPClientResponse
        var isProxy: Bool
        var challengeOrigin: Origin
        var clearTextAllowed: Bool
        var configuredProxyCredential: (String, String)?
        var remaining: Duration
    }

    private enum Step {
        /// The protection space was rejected: the next offer.
        case next
        case outcome(Outcome)
    }

    /// Raises the challenge of one offer and turns the disposition into the request to send next, the
    /// final response, or an error.
    private mutating func answer(_ offer: OfferedAuthentication, _ context: AnswerContext) async throws -> Step {
        let (request, origin, isProxy) = (context.request, context.challengeOrigin, context.isProxy)
        let space = ProtectionSpace(
            host: origin.host, port: origin.port, scheme: origin.scheme, realm: offer.realm,
            authenticationMethod: offer.scheme.authenticationMethod, isProxy: isProxy)
        let failureCount = ledger.failureCount(in: space)
        guard failureCount <= configuration.maximumAuthenticationFailures else { return .outcome(.final(TrustHTTPClientStreamingResponse(context.failure))) }
        let proposed = proposedCredential(for: space, origin: origin, isProxy: isProxy)
        let challenge = AuthenticationChallenge(
            protectionSpace: space, previousFailureCount: failureCount, proposedCredential: proposed,
            failureResponse: context.failure, httpChallenge: offer.challenge)
        guard let disposition = await ChallengeChain.ask(task: taskHandler, session: sessionHandler, challenge, timeout: context.remaining) else {
            throw TrustHTTPClientError(.timedOut, "the \(space) challenge was not answered", url: request.url)
        }
        let credential: Credential?
        switch disposition {
        case .useCredential(let given): credential = given
        case .performDefaultHandling: credential = failureCount == 0 ? proposed : nil
        case .cancelAuthenticationChallenge: throw TrustHTTPClientError(.userCancelledAuthentication, "the \(space) challenge was cancelled", url: request.url)
        case .rejectProtectionSpace: return .next
        }
        guard let credential else { return .outcome(.final(TrustHTTPClientStreamingResponse(context.failure))) }
        let (user, password) = try Self.sendableUser(credential, for: offer, in: space, context)
        let attempt = Attempt(space: space, user: user, password: password, persistence: credential.persistence, digest: nil, counts: true)
        if let digest = offer.digest {
            return .outcome(.retry(answer(request, digestChallenge: digest, attempt: attempt, isProxy: isProxy)))
        }
        return .outcome(.retry(try answerBasic(request, attempt: attempt, isProxy: isProxy)))
    }

    /// The user and password of `credential`, if they may be sent in answer to `offer`: a user
    /// credential, without control characters, and not Basic over plain http unless allowed or the
    /// one configured for the proxy.
    private static func sendableUser(
        _ credential: Credential, for offer: OfferedAuthentication, in space: ProtectionSpace,
        _ context: AnswerContext
    ) throws -> (String, String) {
        let url = context.request.url
        guard case .user(let user, let password) = credential.kind else {
            throw TrustHTTPClientError(.userAuthenticationRequired, "the answer to the \(space) challenge is not a user credential (\(credential))", url: url)
        }
        guard !(user + password).unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw TrustHTTPClientError(.userAuthenticationRequired, "the credential for the \(space) challenge contains a control character", url: url)
        }
        if offer.scheme == .basic && !context.clearTextAllowed && !(context.configuredProxyCredential.map { $0.0 == user && $0.1 == password } ?? false) {
            throw TrustHTTPClientError(
                .userAuthenticationRequired,
                "\(context.challengeOrigin) asks for Basic authentication over plain http: only the credential configured for this proxy may travel in clear text",
                url: url)
        }
        return (user, password)
    }

    /// `request` with the Basic answer of `attempt` (RFC 7617), which becomes the attempt awaiting the response.
    private mutating func answerBasic(_ request: TrustHTTPClientRequest, attempt: Attempt, isProxy: Bool) throws -> TrustHTTPClientRequest {
        do {
            let basic = try BasicAuthorization(user: attempt.user, password: attempt.password)
            var next = request
            next.setHeader(isProxy ? .proxyAuthorization : .authorization, basic.fieldValue)
            if isProxy { proxy = attempt } else { self.origin = attempt }
            return next
        } catch {
            throw TrustHTTPClientError(.userAuthenticationRequired, "cannot answer the \(attempt.space) challenge: \(error)", url: request.url)
        }
    }

    /// Says why rather than return a bare 401 — when only Basic over plain http was offered and a
    /// credential could have been sent.
    private func explainUnanswered(_ challenges: [HTTPChallenge], refusedClearText: Bool, isProxy: Bool, challengeOrigin: Origin, url: URL) throws {
        guard refusedClearText else { return }
        let couldAnswer =
            taskHandler != nil || sessionHandler != nil || (!isProxy && challengeOrigin == originalOrigin && requestCredential != nil)
            || challenges.contains { challenge in
                challenge.schemeName == "basic"
                    && proposedCredential(
                        for: ProtectionSpace(
                            host: challengeOrigin.host, port: challengeOrigin.port, scheme: challengeOrigin.scheme, realm: challenge.realm,
                            authenticationMethod: .httpBasic, isProxy: isProxy), origin: challengeOrigin, isProxy: isProxy) != nil
            }
        if couldAnswer {
            throw TrustHTTPClientError(
                .userAuthenticationRequired,
                "\(challengeOrigin) asks for Basic authentication over plain http: the password would travel in clear text (allow it with allowsCredentialsOverHTTP)",
                url: url)
        }
    }

    private mutating func answer(_ request: TrustHTTPClientRequest, digestChallenge: DigestChallenge, attempt: Attempt, isProxy: Bool) -> TrustHTTPClientRequest
    {
        // What the answered request line says: CONNECT host:port for a tunnel, the absolute URI for
        // a request a proxy receives itself, the path otherwise.
        var method = request.method.uppercased()
        var uri = TrustHTTPClient.target(of: request.url)
        if isProxy, let origin = Origin(request.url) {
            if origin.isSecure {
                method = "CONNECT"
                uri = origin.authority
            } else {
                uri = origin.description + uri
            }
        }
        let digest = DigestAuthorization(
            challenge: digestChallenge, user: attempt.user, password: attempt.password, method: method,
            uri: uri, body: isProxy && method == "CONNECT" ? [] : request.body?.bytesInMemory ?? [], nonceCount: 1)
        var next = request
        next.setHeader(isProxy ? .proxyAuthorization : .authorization, digest.fieldValue)
        var updated = attempt
        updated.digest = digest
        if isProxy { proxy = updated } else { origin = updated }
        return next
    }

    /// The request's own credential for its own origin; else the store's default for the space
    /// (or for the same realm under the other HTTP scheme).
    private func proposedCredential(for space: ProtectionSpace, origin: Origin, isProxy: Bool) -> Credential? {
        if !isProxy, origin == originalOrigin, let requestCredential { return requestCredential }
        if isProxy, let given = originalOrigin.flatMap({ router.proxy(for: $0) })?.credential, given.isUser { return given }
        guard let store = configuration.credentialStore else { return nil }
        if let stored = store.defaultCredential(for: space) { return stored }
        var other = space
        other.authenticationMethod = space.authenticationMethod == .httpBasic ? .httpDigest : .httpBasic
        return store.defaultCredential(for: other)
    }
}

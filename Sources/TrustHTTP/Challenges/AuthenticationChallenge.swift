import Trust

/// A question the session needs answered: URLSession's `URLAuthenticationChallenge`.
public struct AuthenticationChallenge: Sendable {
    /// Where the challenge comes from and what kind of authentication it asks for.
    public var protectionSpace: ProtectionSpace
    /// For server-trust challenges: what the server presented, and the name expected.
    public var serverTrust: ServerTrust?
    /// How many times this protection space has already been answered wrongly.
    public var previousFailureCount: Int
    /// A credential the session would use by default (stored, or from the URL).
    public var proposedCredential: Credential?
    /// For HTTP authentication: the 401/407 response that raised the challenge.
    public var failureResponse: TrustHTTPClientResponse?
    /// The error that made a retry necessary, if any.
    public var error: TrustHTTPClientError?
    /// For HTTP authentication: the challenge being answered, as the server sent it (scheme,
    /// realm, algorithm…); when a response offers several, the strongest is raised first and
    /// `.rejectProtectionSpace` moves on to the next.
    public var httpChallenge: HTTPChallenge?
    /// What default handling would decide for this server trust (the configured evaluator).
    /// A handler can call it to decide "default, plus my own rule".
    public let defaultEvaluation: @Sendable () async -> TrustDecision?

    /// A challenge; everything but the protection space is optional.
    public init(
        protectionSpace: ProtectionSpace, serverTrust: ServerTrust? = nil, previousFailureCount: Int = 0,
        proposedCredential: Credential? = nil, failureResponse: TrustHTTPClientResponse? = nil, error: TrustHTTPClientError? = nil,
        httpChallenge: HTTPChallenge? = nil,
        defaultEvaluation: @escaping @Sendable () async -> TrustDecision? = { nil }
    ) {
        self.protectionSpace = protectionSpace
        self.serverTrust = serverTrust
        self.previousFailureCount = previousFailureCount
        self.proposedCredential = proposedCredential
        self.failureResponse = failureResponse
        self.error = error
        self.httpChallenge = httpChallenge
        self.defaultEvaluation = defaultEvaluation
    }
}

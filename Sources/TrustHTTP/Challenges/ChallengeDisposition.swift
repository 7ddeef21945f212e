/// The answer to a challenge: URLSession's `AuthChallengeDisposition` with its credential.
public enum ChallengeDisposition: Sendable {
    /// Answer with this credential. For server trust, `Credential(trust:)` accepts the server.
    /// A `nil` or mismatched credential is an error (the request fails), never a crash.
    case useCredential(Credential?)
    /// Let the session decide: the configured trust evaluation, the stored credential…
    case performDefaultHandling
    /// Abort the request.
    case cancelAuthenticationChallenge
    /// Refuse this protection space: for server trust the connection is refused; for HTTP
    /// authentication the next offered scheme is tried.
    case rejectProtectionSpace
}

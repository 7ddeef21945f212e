/// The bookkeeping of one request's HTTP authentication, apart from any answer: refused credentials
/// per protection space, retries of a Digest answer whose nonce had only gone stale, and rounds of
/// challenges — what bounds a request however a server (or a handler) behaves.
struct AuthenticationLedger {
    /// Credentials refused per protection space.
    private(set) var failures: [ProtectionSpace: Int] = [:]
    private var staleRetries = 0
    private var rounds = 0

    /// Stale-nonce retries per request (RFC 7616 §3.3 `stale=true`: the same credential, a fresh nonce).
    static let maximumStaleRetries = 2
    /// Challenges answered per request, all spaces together (a server inventing a new realm on
    /// every 401 must not keep the request going).
    static let maximumRounds = 8

    /// Counts a round of challenges; false once the request has had its last.
    mutating func beginRound() -> Bool {
        rounds += 1
        return rounds <= Self.maximumRounds
    }

    /// Counts a stale-nonce retry; false once they are used up.
    mutating func allowsStaleRetry() -> Bool {
        guard staleRetries < Self.maximumStaleRetries else { return false }
        staleRetries += 1
        return true
    }

    /// A credential sent for `space` was refused.
    mutating func recordRefusal(in space: ProtectionSpace) {
        failures[space, default: 0] += 1
    }

    /// Credentials `space` has refused so far (a challenge's `previousFailureCount`).
    func failureCount(in space: ProtectionSpace) -> Int { failures[space] ?? 0 }
}

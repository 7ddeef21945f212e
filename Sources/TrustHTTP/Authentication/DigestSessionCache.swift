import NIOConcurrencyHelpers

/// Digest state a session keeps per origin (proxies are answered afresh) after a successful exchange, so the
/// next request answers at once: the same nonce with the next nonce-count, or the `nextnonce` the
/// server gave in `Authentication-Info`. A server that no longer accepts the nonce answers 401
/// with `stale=true`, and the request is retried with the new one. Bounded in size.
final class DigestSessionCache: Sendable {
    struct Entry: Sendable {
        var challenge: DigestChallenge
        var user: String
        var password: String
        var space: ProtectionSpace
        var persistence: CredentialPersistence
        /// Requests already sent with ``challenge``'s nonce.
        var nonceCount: UInt32
    }

    static let capacity = 256
    private let entries = NIOLockedValueBox<[String: Entry]>([:])

    static func key(_ origin: Origin) -> String {
        origin.description
    }

    /// The answer for the next request to `key`, counting it; nil without a Digest session there.
    /// - Parameter body: read only when the nonce's qop is `auth-int` (the body is hashed then, and never copied otherwise).
    func nextAuthorization(for key: String, method: String, uri: String, body: () -> [UInt8], accept: (Entry) -> Bool) -> (DigestAuthorization, Entry)? {
        entries.withLockedValue { entries -> (DigestAuthorization, Entry)? in
            guard var entry = entries[key], entry.nonceCount < UInt32.max, accept(entry) else { return nil }
            entry.nonceCount += 1
            entries[key] = entry
            let answer = DigestAuthorization(
                challenge: entry.challenge, user: entry.user, password: entry.password, method: method, uri: uri,
                body: entry.challenge.chosenQualityOfProtection == .authInt ? body() : [], nonceCount: entry.nonceCount)
            return (answer, entry)
        }
    }

    /// Records a Digest exchange that succeeded (with `nextNonce` from `Authentication-Info`, if any).
    func succeeded(
        _ key: String, authorization: DigestAuthorization, user: String, password: String, space: ProtectionSpace,
        persistence: CredentialPersistence, nextNonce: String?
    ) {
        var challenge = authorization.challenge
        var count = authorization.nonceCount
        if let nextNonce, !nextNonce.isEmpty, nextNonce != challenge.nonce {
            challenge.nonce = nextNonce
            count = 0
        }
        challenge.isStale = false
        let entry = Entry(challenge: challenge, user: user, password: password, space: space, persistence: persistence, nonceCount: count)
        entries.withLockedValue { entries in
            if entries[key] == nil && entries.count >= Self.capacity, let victim = entries.keys.first { entries[victim] = nil }
            // Requests in flight may have counted past this one: never go back.
            if let existing = entries[key], existing.challenge.nonce == entry.challenge.nonce, existing.nonceCount > entry.nonceCount { return }
            entries[key] = entry
        }
    }

    func remove(_ key: String) {
        entries.withLockedValue { $0[key] = nil }
    }
}

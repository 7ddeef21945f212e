/// The HTTP authentication schemes the session answers, strongest first when several are offered.
public enum HTTPAuthenticationScheme: Sendable, Hashable, CustomStringConvertible {
    /// HTTP Basic (RFC 7617).
    case basic
    /// HTTP Digest (RFC 7616) with the given algorithm.
    case digest(DigestAlgorithm)

    /// Higher is stronger; Basic is the weakest.
    package var strength: Int {
        switch self {
        case .basic: return 0
        case .digest(let algorithm): return algorithm.strength
        }
    }

    /// The authentication method of a challenge in this scheme.
    package var authenticationMethod: AuthenticationMethod {
        switch self {
        case .basic: return .httpBasic
        case .digest: return .httpDigest
        }
    }

    /// The scheme as text (`Basic`, `Digest SHA-256`…).
    public var description: String {
        switch self {
        case .basic: return "Basic"
        case .digest(let algorithm): return "Digest \(algorithm)"
        }
    }
}

/// Which schemes a session (or `trust get --basic/--digest/--any-auth`) will answer.
public enum HTTPAuthenticationSchemes: String, Sendable, Hashable, CaseIterable {
    /// The strongest offered (the default).
    case any
    /// Basic only.
    case basic
    /// Digest only.
    case digest

    func allows(_ scheme: HTTPAuthenticationScheme) -> Bool {
        switch (self, scheme) {
        case (.any, _), (.basic, .basic), (.digest, .digest): return true
        default: return false
        }
    }
}

/// One challenge the session can answer: parsed, checked, ranked.
struct OfferedAuthentication: Sendable {
    let challenge: HTTPChallenge
    let scheme: HTTPAuthenticationScheme
    let digest: DigestChallenge?

    var realm: String? { challenge.realm }

    /// The answerable challenges among `challenges`, strongest first (stable for equal strength),
    /// with a note for each one skipped.
    static func rank(_ challenges: [HTTPChallenge], allowed: HTTPAuthenticationSchemes) -> (offers: [OfferedAuthentication], skipped: [String]) {
        var offers: [OfferedAuthentication] = []
        var skipped: [String] = []
        for challenge in challenges {
            switch challenge.schemeName {
            case "basic":
                if allowed.allows(.basic) { offers.append(OfferedAuthentication(challenge: challenge, scheme: .basic, digest: nil)) }
            case "digest":
                do {
                    let digest = try DigestChallenge(challenge)
                    let scheme = HTTPAuthenticationScheme.digest(digest.algorithm)
                    if allowed.allows(scheme) { offers.append(OfferedAuthentication(challenge: challenge, scheme: scheme, digest: digest)) }
                } catch {
                    skipped.append("\(error)")
                }
            default:
                skipped.append("scheme \(challenge.scheme) is not supported")
            }
        }
        let ranked = offers.enumerated().sorted { a, b in
            a.element.scheme.strength != b.element.scheme.strength ? a.element.scheme.strength > b.element.scheme.strength : a.offset < b.offset
        }.map(\.element)
        return (ranked, skipped)
    }
}

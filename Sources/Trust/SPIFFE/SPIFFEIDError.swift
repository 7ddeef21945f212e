/// Why a text is not a SPIFFE ID (SPIFFE-ID.md §2) or not a trust domain name (§2.1).
///
/// Each case carries the text as given; ``description`` shows it escaped (``DisplayText``) and shortened, since
/// the text usually comes from a certificate's URI SAN, which its issuer chose.
public struct SPIFFEIDError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error with its data, for this package's code (cases come in minor versions without breaking a
    /// client, who shows the error: its description says what is wrong).
    package let detail: Detail

    package init(_ detail: Detail) { self.detail = detail }

    /// A short stable identifier, for JSON output and scripts.
    public var code: String { detail.code }

    /// What is wrong, with the text escaped (``DisplayText``).
    public var description: String { detail.description }

    /// What is wrong, with the text as given (our own words hold nothing ``DisplayText`` escapes).
    var sentence: String { detail.sentence }

    /// The text is empty.
    package static let empty = Self(.empty)
    /// Longer than 2,048 bytes (SPIFFE-ID.md §2.3).
    package static func tooLong(_ value0: String, length: Int) -> Self { Self(.tooLong(value0, length: length)) }
    /// The scheme is not `spiffe` followed by `://` (SPIFFE-ID.md §2).
    package static func wrongScheme(_ value0: String) -> Self { Self(.wrongScheme(value0)) }
    /// No trust domain name after `spiffe://` (SPIFFE-ID.md §2: a non-zero trust domain name).
    package static func missingTrustDomain(_ value0: String) -> Self { Self(.missingTrustDomain(value0)) }
    /// The trust domain name is longer than 255 bytes (SPIFFE-ID.md §2.3, the host limit of RFC 3986).
    package static func trustDomainTooLong(_ value0: String, length: Int) -> Self { Self(.trustDomainTooLong(value0, length: length)) }
    /// A character other than a lowercase letter, a digit, `.`, `-` or `_` in the trust domain (SPIFFE-ID.md §2.1).
    package static func invalidTrustDomainCharacter(_ value0: String, character: String) -> Self {
        Self(.invalidTrustDomainCharacter(value0, character: character))
    }
    /// A port, or userinfo, in the authority (SPIFFE-ID.md §2.1: `userinfo` and `port` MUST NOT be set).
    package static func portOrUserInfo(_ value0: String) -> Self { Self(.portOrUserInfo(value0)) }
    /// A query or a fragment (SPIFFE-ID.md §2: MUST NOT include one).
    package static func queryOrFragment(_ value0: String) -> Self { Self(.queryOrFragment(value0)) }
    /// An empty path segment (`//`) (SPIFFE-ID.md §2.2).
    package static func emptySegment(_ value0: String) -> Self { Self(.emptySegment(value0)) }
    /// A `.` or `..` path segment (SPIFFE-ID.md §2.2).
    package static func dotSegment(_ value0: String) -> Self { Self(.dotSegment(value0)) }
    /// The path ends with `/` (SPIFFE-ID.md §2.2).
    package static func trailingSlash(_ value0: String) -> Self { Self(.trailingSlash(value0)) }
    /// A character other than a letter, a digit, `.`, `-` or `_` in a path segment (SPIFFE-ID.md §2.2).
    package static func invalidPathCharacter(_ value0: String, character: String) -> Self { Self(.invalidPathCharacter(value0, character: character)) }
}

extension SPIFFEIDError {
    /// The cases, exhaustive inside this package.
    package enum Detail: Hashable, Sendable {
        /// The text is empty.
        case empty
        /// Longer than 2,048 bytes (SPIFFE-ID.md §2.3).
        case tooLong(String, length: Int)
        /// The scheme is not `spiffe` followed by `://` (SPIFFE-ID.md §2).
        case wrongScheme(String)
        /// No trust domain name after `spiffe://` (SPIFFE-ID.md §2: a non-zero trust domain name).
        case missingTrustDomain(String)
        /// The trust domain name is longer than 255 bytes (SPIFFE-ID.md §2.3, the host limit of RFC 3986).
        case trustDomainTooLong(String, length: Int)
        /// A character other than a lowercase letter, a digit, `.`, `-` or `_` in the trust domain (SPIFFE-ID.md §2.1).
        case invalidTrustDomainCharacter(String, character: String)
        /// A port, or userinfo, in the authority (SPIFFE-ID.md §2.1: `userinfo` and `port` MUST NOT be set).
        case portOrUserInfo(String)
        /// A query or a fragment (SPIFFE-ID.md §2: MUST NOT include one).
        case queryOrFragment(String)
        /// An empty path segment (`//`) (SPIFFE-ID.md §2.2).
        case emptySegment(String)
        /// A `.` or `..` path segment (SPIFFE-ID.md §2.2).
        case dotSegment(String)
        /// The path ends with `/` (SPIFFE-ID.md §2.2).
        case trailingSlash(String)
        /// A character other than a letter, a digit, `.`, `-` or `_` in a path segment (SPIFFE-ID.md §2.2).
        case invalidPathCharacter(String, character: String)

        /// A short stable identifier, for JSON output and scripts.
        package var code: String {
            switch self {
            case .empty: return "empty"
            case .tooLong: return "too-long"
            case .wrongScheme: return "wrong-scheme"
            case .missingTrustDomain: return "missing-trust-domain"
            case .trustDomainTooLong: return "trust-domain-too-long"
            case .invalidTrustDomainCharacter: return "invalid-trust-domain-character"
            case .portOrUserInfo: return "port-or-userinfo"
            case .queryOrFragment: return "query-or-fragment"
            case .emptySegment: return "empty-path-segment"
            case .dotSegment: return "dot-path-segment"
            case .trailingSlash: return "trailing-slash"
            case .invalidPathCharacter: return "invalid-path-character"
            }
        }

        /// What is wrong, with the text escaped (``DisplayText``).
        package var description: String { DisplayText.escaped(sentence) }

        /// What is wrong, with the text as given (our own words hold nothing ``DisplayText`` escapes).
        var sentence: String {
            switch self {
            case .empty:
                return "a SPIFFE ID cannot be empty"
            case .tooLong(let id, let length):
                return "\(Self.shown(id)) is \(length) bytes long; a SPIFFE ID has at most 2048 (SPIFFE-ID §2.3)"
            case .wrongScheme(let id):
                return "\(Self.shown(id)) does not start with spiffe:// (SPIFFE-ID §2)"
            case .missingTrustDomain(let id):
                return "\(Self.shown(id)) has no trust domain name (SPIFFE-ID §2)"
            case .trustDomainTooLong(let id, let length):
                return "the trust domain of \(Self.shown(id)) is \(length) bytes long; at most 255 are allowed (SPIFFE-ID §2.3)"
            case .invalidTrustDomainCharacter(let id, let character):
                return
                    "the trust domain of \(Self.shown(id)) holds \(Self.shown(character)); only lowercase letters, digits, '.', '-' and '_' are allowed (SPIFFE-ID §2.1)"
            case .portOrUserInfo(let id):
                return "\(Self.shown(id)) has a port or userinfo in its authority, which a SPIFFE ID must not have (SPIFFE-ID §2.1)"
            case .queryOrFragment(let id):
                return "\(Self.shown(id)) has a query or a fragment, which a SPIFFE ID must not have (SPIFFE-ID §2)"
            case .emptySegment(let id):
                return "the path of \(Self.shown(id)) has an empty segment (SPIFFE-ID §2.2)"
            case .dotSegment(let id):
                return "the path of \(Self.shown(id)) has a '.' or '..' segment (SPIFFE-ID §2.2)"
            case .trailingSlash(let id):
                return "the path of \(Self.shown(id)) ends with '/' (SPIFFE-ID §2.2)"
            case .invalidPathCharacter(let id, let character):
                return
                    "the path of \(Self.shown(id)) holds \(Self.shown(character)); only letters, digits, '.', '-' and '_' are allowed in a segment (SPIFFE-ID §2.2)"
            }
        }

        /// `text` quoted, its first 256 characters only (a URI SAN may be as long as its issuer likes).
        static func shown(_ text: String) -> String {
            "\"" + (text.count > 256 ? String(text.prefix(256)) + "…" : text) + "\""
        }
    }
}

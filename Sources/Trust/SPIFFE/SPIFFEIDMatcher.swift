/// Which SPIFFE IDs a peer may have: one exact ID, any ID of a trust domain, or any ID under a path.
///
/// A path prefix matches whole segments only: `spiffe://example.org/ns/a` as a prefix matches
/// `spiffe://example.org/ns/a` and `spiffe://example.org/ns/a/b`, never `spiffe://example.org/ns/ab`.
///
/// As text (``init(parsing:)``, the `--spiffe-id` option): `spiffe://example.org/ns/a` is exact,
/// `spiffe://example.org` any ID of the trust domain, `spiffe://example.org/ns/a/*` the path prefix `/ns/a`.
public enum SPIFFEIDMatcher: Sendable, Hashable, CustomStringConvertible {
    /// Exactly this ID.
    case exact(SPIFFEID)
    /// Any ID in this trust domain.
    case trustDomain(SPIFFETrustDomain)
    /// This ID's trust domain, with this ID's path or a path below it (whole segments).
    case pathPrefix(SPIFFEID)

    /// Parses the text form (see the type's description): a `/*` at the end makes a path prefix, an ID without a
    /// path a trust domain, any other ID an exact match.
    public init(parsing text: String) throws(SPIFFEIDError) {
        if text.hasSuffix("/*") {
            let id = try SPIFFEID(parsing: String(text.dropLast(2)))
            self = id.isTrustDomainID ? .trustDomain(id.trustDomain) : .pathPrefix(id)
            return
        }
        let id = try SPIFFEID(parsing: text)
        self = id.isTrustDomainID ? .trustDomain(id.trustDomain) : .exact(id)
    }

    /// The trust domain this matcher allows IDs of.
    public var allowedTrustDomain: SPIFFETrustDomain {
        switch self {
        case .exact(let id), .pathPrefix(let id): return id.trustDomain
        case .trustDomain(let domain): return domain
        }
    }

    /// Whether `id` is allowed.
    public func matches(_ id: SPIFFEID) -> Bool {
        switch self {
        case .exact(let expected):
            return id == expected
        case .trustDomain(let domain):
            return id.trustDomain == domain
        case .pathPrefix(let prefix):
            guard id.trustDomain == prefix.trustDomain else { return false }
            // Whole segments: the prefix itself, or the prefix followed by "/" and more.
            return prefix.path.isEmpty || id.path == prefix.path || id.path.hasPrefix(prefix.path + "/")
        }
    }

    /// The text form, which ``init(parsing:)`` reads back.
    public var description: String {
        switch self {
        case .exact(let id): return id.description
        case .trustDomain(let domain): return domain.description
        case .pathPrefix(let id): return id.description + "/*"
        }
    }
}

/// A SPIFFE ID: `spiffe://TRUST-DOMAIN/PATH` (SPIFFE-ID.md §2), parsed and validated.
///
/// The rules (each refused with its own ``SPIFFEIDError``, the text escaped in its description):
/// - the scheme is `spiffe`, followed by `://` (§2); at most 2,048 bytes in all (§2.3);
/// - the trust domain is not empty and holds only lowercase letters, digits, `.`, `-` and `_`, at most 255 bytes;
///   no userinfo and no port (§2.1);
/// - the path is empty or made of `/`-separated segments of letters, digits, `.`, `-` and `_`: no empty, `.` or `..`
///   segment, no trailing `/` (§2.2);
/// - no query and no fragment (§2).
///
/// Percent-encoding is refused too: `%` is none of the characters §2.2 allows, so two spellings of one ID can
/// never both pass. IDs compare exactly, as text.
public struct SPIFFEID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The trust domain (the URI's host).
    public let trustDomain: SPIFFETrustDomain
    /// The path: empty (the trust domain's own ID), or `/` followed by segments (`/ns/prod/sa/web`).
    public let path: String

    static let schemePrefix = "spiffe://"
    /// The longest SPIFFE ID accepted, in bytes (SPIFFE-ID.md §2.3).
    package static let maximumLength = 2048

    /// Parses `text`, refusing anything SPIFFE-ID.md §2 does not allow.
    public init(parsing text: String) throws(SPIFFEIDError) {
        guard !text.isEmpty else { throw .empty }
        guard text.utf8.count <= Self.maximumLength else { throw .tooLong(text, length: text.utf8.count) }
        guard text.hasPrefix(Self.schemePrefix) else { throw .wrongScheme(text) }
        let rest = text.dropFirst(Self.schemePrefix.count)
        if rest.contains("?") || rest.contains("#") { throw .queryOrFragment(text) }
        let authority = rest.prefix { $0 != "/" }
        let name = try SPIFFETrustDomain.validated(authority, in: text)
        let path = rest.dropFirst(authority.count)
        try Self.validatePath(path, in: text)
        self.trustDomain = SPIFFETrustDomain(validatedName: name)
        self.path = String(path)
    }

    /// An ID in `trustDomain` with `path` (empty, or starting with `/`), checked as ``init(parsing:)`` checks it.
    public init(trustDomain: SPIFFETrustDomain, path: String) throws(SPIFFEIDError) {
        try self.init(parsing: Self.schemePrefix + trustDomain.name + path)
    }

    init(trustDomain: SPIFFETrustDomain, validatedPath: String) {
        self.trustDomain = trustDomain
        self.path = validatedPath
    }

    /// The path's segments (`["ns", "prod"]` for `/ns/prod`); none for a trust domain's own ID.
    package var segments: [Substring] { path.split(separator: "/", omittingEmptySubsequences: true) }

    /// Whether the path is empty: the ID names a trust domain, not a workload (X509-SVID.md §3.1: a leaf SVID's ID
    /// has a non-root path; §3.2: a signing certificate's has none).
    package var isTrustDomainID: Bool { path.isEmpty }

    /// `spiffe://TRUST-DOMAIN/PATH`. Validation admits nothing ``DisplayText`` escapes, so this is safe to show.
    public var description: String { Self.schemePrefix + trustDomain.name + path }

    /// Orders by the text.
    public static func < (lhs: SPIFFEID, rhs: SPIFFEID) -> Bool { lhs.description < rhs.description }

    /// SPIFFE-ID.md §2.2: segments of letters, digits, `.`, `-`, `_`; none empty, `.` or `..`; no trailing `/`.
    private static func validatePath(_ path: Substring, in whole: String) throws(SPIFFEIDError) {
        guard !path.isEmpty else { return }
        if path.hasSuffix("/") { throw .trailingSlash(whole) }
        for segment in path.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            guard !segment.isEmpty else { throw .emptySegment(whole) }
            guard segment != "." && segment != ".." else { throw .dotSegment(whole) }
            for scalar in segment.unicodeScalars {
                switch scalar {
                case "a"..."z", "A"..."Z", "0"..."9", ".", "-", "_": continue
                default: throw .invalidPathCharacter(whole, character: String(scalar))
                }
            }
        }
    }
}

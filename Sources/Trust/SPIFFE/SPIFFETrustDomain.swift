/// A SPIFFE trust domain name: the authority of a SPIFFE ID (SPIFFE-ID.md §2.1), such as `example.org`.
///
/// Only lowercase letters, digits, `.`, `-` and `_`, 1 to 255 bytes (§2.1, §2.3). Compared exactly.
public struct SPIFFETrustDomain: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The name, as in the ID (`example.org`).
    public let name: String

    /// A trust domain from its name (`example.org`) or its SPIFFE ID (`spiffe://example.org`, no path).
    public init(parsing text: String) throws(SPIFFEIDError) {
        if text.hasPrefix(SPIFFEID.schemePrefix) {
            let id = try SPIFFEID(parsing: text)
            guard id.path.isEmpty else { throw .invalidTrustDomainCharacter(text, character: "/") }
            self = id.trustDomain
            return
        }
        self.name = try Self.validated(Substring(text), in: text)
    }

    init(validatedName: String) {
        self.name = validatedName
    }

    /// The trust domain's own SPIFFE ID, `spiffe://NAME`.
    public var id: SPIFFEID { SPIFFEID(trustDomain: self, validatedPath: "") }

    /// `spiffe://NAME`.
    public var description: String { SPIFFEID.schemePrefix + name }

    /// Orders by name.
    public static func < (lhs: SPIFFETrustDomain, rhs: SPIFFETrustDomain) -> Bool { lhs.name < rhs.name }

    /// `name` checked against SPIFFE-ID.md §2.1 and §2.3; `whole` is the text errors quote.
    static func validated(_ name: Substring, in whole: String) throws(SPIFFEIDError) -> String {
        guard !name.isEmpty else { throw .missingTrustDomain(whole) }
        for scalar in name.unicodeScalars {
            switch scalar {
            case "a"..."z", "0"..."9", ".", "-", "_":
                continue
            case ":", "@":
                throw .portOrUserInfo(whole)
            case "?", "#":
                throw .queryOrFragment(whole)
            default:
                throw .invalidTrustDomainCharacter(whole, character: String(scalar))
            }
        }
        guard name.utf8.count <= 255 else { throw .trustDomainTooLong(whole, length: name.utf8.count) }
        return String(name)
    }
}

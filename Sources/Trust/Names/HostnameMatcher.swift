/// RFC 6125 / CA/Browser Forum matching of a DNS peer name against the names a
/// certificate presents.
///
/// - A wildcard is accepted only as the *whole* leftmost label (`*.example.com`);
///   partial wildcards (`ba*.example.com`, `*z.example.com`) and a bare `*` never match.
/// - A wildcard needs at least two labels after it (`*.com` never matches), and never
///   matches when the remaining name is a public suffix (`*.co.uk`), when a
///   ``PublicSuffixList`` is available.
/// - A wildcard matches exactly one label: `*.example.com` does not match
///   `example.com` nor `a.b.example.com`.
public struct HostnameMatcher: Sendable {
    /// Public suffixes on which wildcards are refused; `nil` skips that check.
    package var publicSuffixes: PublicSuffixList?

    /// Creates a matcher, with a public suffix list if one is given.
    package init(publicSuffixes: PublicSuffixList? = nil) {
        self.publicSuffixes = publicSuffixes
    }

    /// Whether `presented` (a dNSName from a certificate) matches the canonical `host`.
    package func matches(presented rawPresented: String, host: String) -> Bool {
        guard let presented = Self.normalisePresented(rawPresented) else { return false }
        return matches(normalised: presented, host: host)
    }

    /// Whether `presented`, already normalised by `normalisePresented`, matches the canonical `host`.
    func matches(normalised presented: String, host: String) -> Bool {
        if !presented.hasPrefix("*.") { return presented == host }
        let suffix = presented.dropFirst(2)
        guard !suffix.contains("*"), suffix.split(separator: ".").count >= 2 else { return false }
        if let publicSuffixes, publicSuffixes.isPublicSuffix(String(suffix)) { return false }
        guard let dot = host.firstIndex(of: ".") else { return false }
        let hostFirstLabel = host[..<dot]
        guard !hostFirstLabel.isEmpty else { return false }
        return host[host.index(after: dot)...] == suffix
    }

    /// Lower-cases a presented dNSName, or refuses it unless it is in RFC 1034/1123 preferred
    /// name syntax (letters, digits, hyphens; `*` only as the whole first label). An underscore,
    /// a space, an empty label or a trailing dot never matches (RFC 5280 §4.2.1.6). Works on the
    /// UTF-8 bytes: only ASCII letters are lowered, so no non-ASCII character can become one.
    static func normalisePresented(_ name: String) -> String? {
        var bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 253 else { return nil }
        var labelStart = 0
        for index in 0...bytes.count {
            guard index < bytes.count, bytes[index] != UInt8(ascii: ".") else {
                // The label bytes[labelStart..<index] ends here.
                let length = index - labelStart
                let wildcard = labelStart == 0 && length == 1 && bytes[0] == UInt8(ascii: "*")
                guard wildcard || (length >= 1 && length <= 63 && bytes[labelStart] != 0x2D && bytes[index - 1] != 0x2D) else { return nil }
                labelStart = index + 1
                continue
            }
            let byte = bytes[index]
            if byte >= 0x41 && byte <= 0x5A {
                bytes[index] = byte + 0x20
            } else if !((byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D
                || (byte == UInt8(ascii: "*") && index == 0 && (bytes.count == 1 || bytes[1] == UInt8(ascii: "."))))
            {
                return nil
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

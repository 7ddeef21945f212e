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
    public var publicSuffixes: PublicSuffixList?

    /// Creates a matcher, with a public suffix list if one is given.
    public init(publicSuffixes: PublicSuffixList? = nil) {
        self.publicSuffixes = publicSuffixes
    }

    /// Whether `presented` (a dNSName from a certificate) matches the canonical `host`.
    public func matches(presented rawPresented: String, host: String) -> Bool {
        guard let presented = Self.normalisePresented(rawPresented) else { return false }
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
    /// a space, an empty label or a trailing dot never matches (RFC 5280 §4.2.1.6).
    static func normalisePresented(_ name: String) -> String? {
        let lowered = name.lowercased()
        let labels = lowered.split(separator: ".", omittingEmptySubsequences: false)
        guard !lowered.isEmpty, lowered.utf8.count <= 253 else { return nil }
        for (index, label) in labels.enumerated() {
            if index == 0 && label == "*" { continue }
            guard !label.isEmpty, label.utf8.count <= 63, label.first != "-", label.last != "-",
                label.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d })
            else { return nil }
        }
        return lowered
    }
}

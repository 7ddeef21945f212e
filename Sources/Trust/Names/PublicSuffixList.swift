import Foundation

/// The Public Suffix List (https://publicsuffix.org), used to refuse wildcards and
/// host patterns that would cover a whole registry (`*.co.uk`).
///
/// Loaded from the system copy (Debian package `publicsuffix`) or any file in the
/// list's format. Rules are matched per the list's algorithm, including `*.` and `!` rules.
public struct PublicSuffixList: Sendable, Hashable {
    private var rules: Set<String>
    private var wildcardRules: Set<String>
    private var exceptionRules: Set<String>

    /// Where Debian, Ubuntu and Fedora install the list.
    public static let systemPaths = [
        "/usr/share/publicsuffix/public_suffix_list.dat",
        "/usr/share/publicsuffix/effective_tld_names.dat",
    ]

    /// Parses the list's text format.
    public init(contents: String) {
        var rules = Set<String>()
        var wildcard = Set<String>()
        var exception = Set<String>()
        for rawLine in contents.split(whereSeparator: \.isNewline) {
            let line = rawLine.split(whereSeparator: \.isWhitespace).first.map(String.init) ?? ""
            if line.isEmpty || line.hasPrefix("//") { continue }
            guard let canonical = try? PeerName.canonicalDNSName(line.replacingOccurrences(of: "*", with: "x").replacingOccurrences(of: "!", with: "")) else { continue }
            if line.hasPrefix("!") {
                exception.insert(canonical)
            } else if line.hasPrefix("*.") {
                wildcard.insert(String(canonical.drop(while: { $0 != "." }).dropFirst()))
            } else {
                rules.insert(canonical)
            }
        }
        self.rules = rules
        self.wildcardRules = wildcard
        self.exceptionRules = exception
    }

    /// The system list, read once per process (the default wherever a list is needed), or `nil`
    /// when no copy is installed.
    public static let shared: PublicSuffixList? = system()

    /// The system list read now, or `nil` when no copy is installed.
    public static func system() -> PublicSuffixList? {
        for path in systemPaths {
            if let text = try? String(contentsOfFile: path, encoding: .utf8) {
                return PublicSuffixList(contents: text)
            }
        }
        return nil
    }

    /// Whether `name` (canonical) is itself a public suffix such as `com` or `co.uk`.
    public func isPublicSuffix(_ name: String) -> Bool {
        if exceptionRules.contains(name) { return false }
        if rules.contains(name) { return true }
        if let dot = name.firstIndex(of: ".") {
            if wildcardRules.contains(String(name[name.index(after: dot)...])) { return true }
        } else {
            // The list's default rule: every single-label name is a public suffix.
            return true
        }
        return false
    }
}

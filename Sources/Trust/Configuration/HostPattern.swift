/// Which hosts a configuration entry covers. Written as:
///
/// | pattern | matches | does not match |
/// |---|---|---|
/// | `example.com` | `example.com` only | `www.example.com` |
/// | `*.example.com` | exactly one more label: `www.example.com` | `example.com`, `a.b.example.com` |
/// | `**.example.com` | the apex and any depth: `example.com`, `www.example.com`, `a.b.example.com` | `evil-example.com`, `example.com.evil.com` |
///
/// Hosts and patterns are canonicalised the same way (lowercase, no trailing dot, IDN → A-label);
/// matching is label by label, never by string suffix. IP addresses match exactly only.
public struct HostPattern: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The forms a pattern takes: the host itself, `*.` or `**.`.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The host itself.
        case exact
        /// One more label than the base (`*.`).
        case oneLabel
        /// The base and any number of labels below it (`**.`).
        case anyDepth
    }

    /// Which form this pattern has.
    public let kind: Kind
    /// The canonical base name (or IP address).
    public let base: String

    /// Why a text is not a valid host pattern.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// The error with its data, for this package's code: cases come in minor versions without breaking a client,
        /// who shows the error (its description says what is wrong).
        package let detail: Detail

        package init(_ detail: Detail) { self.detail = detail }

        /// Human-readable form.
        public var description: String { detail.description }

        package static func invalidName(_ value0: String, _ value1: String) -> Self { Self(.invalidName(value0, value1)) }
        package static func wildcardInside(_ value0: String) -> Self { Self(.wildcardInside(value0)) }
        package static func wildcardOnIPAddress(_ value0: String) -> Self { Self(.wildcardOnIPAddress(value0)) }

        /// The cases, exhaustive inside this package.
        package enum Detail: Sendable, Hashable {
            case invalidName(String, String)
            case wildcardInside(String)
            case wildcardOnIPAddress(String)

            /// Human-readable form.
            package var description: String {
                switch self {
                case .invalidName(let text, let reason): return "\"\(text)\" is not a host name: \(reason)"
                case .wildcardInside(let text): return "\"\(text)\": a wildcard may only be the whole first label (\"*.\" or \"**.\")"
                case .wildcardOnIPAddress(let text): return "\"\(text)\": an IP address cannot have a wildcard"
                }
            }
        }
    }

    /// Parses a pattern such as `example.com`, `*.example.com` or `**.example.com`.
    public init(_ text: String) throws(Problem) {
        var kind = Kind.exact
        var rest = Substring(text)
        if rest.hasPrefix("**.") {
            kind = .anyDepth
            rest = rest.dropFirst(3)
        } else if rest.hasPrefix("*.") {
            kind = .oneLabel
            rest = rest.dropFirst(2)
        }
        guard !rest.contains("*") else { throw .wildcardInside(text) }
        let name: PeerName
        do {
            name = try PeerName(host: String(rest))
        } catch {
            throw .invalidName(text, error.description)
        }
        if case .ipAddress = name, kind != .exact { throw .wildcardOnIPAddress(text) }
        self.kind = kind
        self.base = name.description
    }

    /// Whether `host` (any spelling: case, trailing dot, Unicode) is covered.
    public func matches(_ host: String) -> Bool {
        guard let name = try? PeerName(host: host) else { return false }
        return matches(name)
    }

    /// Whether `name` is covered.
    public func matches(_ name: PeerName) -> Bool {
        let host = name.description
        switch kind {
        case .exact:
            return host == base
        case .oneLabel, .anyDepth:
            guard case .dnsName = name else { return false }
            let hostLabels = host.split(separator: ".", omittingEmptySubsequences: false)
            let baseLabels = base.split(separator: ".", omittingEmptySubsequences: false)
            let extra = hostLabels.count - baseLabels.count
            guard Array(hostLabels.suffix(baseLabels.count)) == baseLabels else { return false }
            return kind == .oneLabel ? extra == 1 : extra >= 0
        }
    }

    /// How specific the pattern is: exact beats any pattern; then more base labels; then `*.` over `**.`.
    package var specificity: Int {
        let labels = base.split(separator: ".").count
        switch kind {
        case .exact: return 1_000_000
        case .oneLabel: return labels * 2 + 1
        case .anyDepth: return labels * 2
        }
    }

    /// The pattern in canonical form, such as `**.example.com`.
    public var description: String {
        switch kind {
        case .exact: return base
        case .oneLabel: return "*." + base
        case .anyDepth: return "**." + base
        }
    }

    /// Decodes a pattern from its text form.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(text)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    /// Encodes the pattern as its text form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

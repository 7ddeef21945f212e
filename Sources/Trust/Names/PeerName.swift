#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The identity a client expects the server to prove: a DNS name or an IP address.
///
/// DNS names are canonicalised before any comparison, so that the same host can
/// never be spelled in a way that slips past a check (upper case, a trailing dot, a U-label): ASCII is
/// lower-cased, one trailing dot is removed, and internationalised labels are
/// converted to their A-label (`xn--…`) form. Names that cannot be made canonical
/// (empty labels, spaces, control characters, labels over 63 octets) are refused.
public enum PeerName: Hashable, Sendable, Codable, CustomStringConvertible {
    /// A canonical (lower-case, A-label, no trailing dot) DNS name.
    case dnsName(String)
    /// An IP address; matched only against `iPAddress` SAN entries.
    case ipAddress(IPAddress)

    /// Parses a host as a user would type it: an IP literal (v4, v6, bracketed v6) or a DNS name.
    public init(host: String) throws(PeerNameError) {
        if let ip = IPAddress(host) {
            self = .ipAddress(ip)
        } else {
            self = .dnsName(try Self.canonicalDNSName(host))
        }
    }

    /// Parses a DNS name only (an IP literal is refused).
    public init(dnsName: String) throws(PeerNameError) {
        if IPAddress(dnsName) != nil { throw .notADNSName(dnsName) }
        self = .dnsName(try Self.canonicalDNSName(dnsName))
    }

    /// The canonical name or address, as text.
    public var description: String {
        switch self {
        case .dnsName(let name): return name
        case .ipAddress(let ip): return ip.description
        }
    }

    /// Canonicalises a DNS name: lower case, A-labels, no trailing dot.
    package static func canonicalDNSName(_ raw: String) throws(PeerNameError) -> String {
        var name = raw
        if name.hasSuffix(".") { name.removeLast() }
        guard !name.isEmpty else { throw .empty }
        // Bounded before any IDN work (Punycode is quadratic in a label's length): 253 octets is the
        // DNS limit; 4 bytes per character leaves room for any Unicode spelling of a valid name.
        guard name.utf8.count <= 253 * 4 else { throw .tooLong(String(raw.prefix(64)) + "…") }
        if name.utf8.allSatisfy({ $0 < 0x80 }) { return try canonicalASCIIName(name, raw: raw) }
        return try IDNA.canonicalName(name, raw: raw)
    }

    /// An all-ASCII name, without Foundation's Unicode normalisation: lower-cased byte by byte (what UTS #46
    /// maps ASCII to), labels of letters, digits, `-` and `_` (host names in use carry underscores, and
    /// curl and browsers accept them), at most 63 octets each; an `xn--` label must be a valid A-label.
    static func canonicalASCIIName(_ name: String, raw: String) throws(PeerNameError) -> String {
        var bytes = Array(name.utf8)
        var labelLength = 0
        for index in bytes.indices {
            var byte = bytes[index]
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") {
                byte |= 0x20
                bytes[index] = byte
            }
            if byte == UInt8(ascii: ".") {
                guard labelLength > 0 else { throw .emptyLabel(raw) }
                guard labelLength <= 63 else { throw .labelTooLong(raw) }
                labelLength = 0
                continue
            }
            let ok =
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            guard ok else { throw .invalidCharacter(raw, String(UnicodeScalar(byte))) }
            labelLength += 1
        }
        guard labelLength > 0 else { throw .emptyLabel(raw) }
        guard labelLength <= 63 else { throw .labelTooLong(raw) }
        guard bytes.count <= 253 else { throw .tooLong(raw) }
        try checkALabels(bytes, raw: raw)
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension PeerName {
    /// Checks each `xn--` label of a lower-case ASCII name (most names have none: one pass over the bytes).
    static func checkALabels(_ bytes: [UInt8], raw: String) throws(PeerNameError) {
        var labelStart = 0
        while labelStart < bytes.count {
            let labelEnd = bytes[labelStart...].firstIndex(of: UInt8(ascii: ".")) ?? bytes.count
            let label = bytes[labelStart..<labelEnd]
            if label.count >= 4 && label.starts(with: "xn--".utf8) { try IDNA.checkALabel(label, raw: raw) }
            labelStart = labelEnd + 1
        }
    }
}

/// Encoded as its text; decoded through ``PeerName/init(host:)``, so a decoded name is canonical too
/// (a synthesized decoder would accept `.dnsName("EXAMPLE.com.")` as it is).
extension PeerName {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            self = try PeerName(host: text)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Why a host name could not be used as a peer name.
public struct PeerNameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error with its data, for this package's code (cases come in minor versions without breaking a
    /// client, who shows the error: its description says what is wrong).
    package let detail: Detail

    package init(_ detail: Detail) { self.detail = detail }

    /// Human-readable form.
    public var description: String { detail.description }

    package static let empty = Self(.empty)
    package static func emptyLabel(_ value0: String) -> Self { Self(.emptyLabel(value0)) }
    package static func labelTooLong(_ value0: String) -> Self { Self(.labelTooLong(value0)) }
    package static func tooLong(_ value0: String) -> Self { Self(.tooLong(value0)) }
    package static func invalidCharacter(_ value0: String, _ value1: String) -> Self { Self(.invalidCharacter(value0, value1)) }
    package static func invalidInternationalisedName(_ value0: String) -> Self { Self(.invalidInternationalisedName(value0)) }
    package static func notADNSName(_ value0: String) -> Self { Self(.notADNSName(value0)) }
    /// An internationalised name breaks an IDNA rule (the name, then the rule in words).
    package static func idnaRule(_ value0: String, _ value1: String) -> Self { Self(.idnaRule(value0, value1)) }
}

extension PeerNameError {
    /// The cases, exhaustive inside this package.
    package enum Detail: Hashable, Sendable {
        case empty
        case emptyLabel(String)
        case labelTooLong(String)
        case tooLong(String)
        case invalidCharacter(String, String)
        case invalidInternationalisedName(String)
        case notADNSName(String)
        /// An internationalised name breaks an IDNA rule (the name, then the rule in words).
        case idnaRule(String, String)

        /// Human-readable form.
        package var description: String {
            switch self {
            case .empty: return "the host name is empty"
            case .emptyLabel(let n): return "the host name \"\(n)\" has an empty label"
            case .labelTooLong(let n): return "the host name \"\(n)\" has a label longer than 63 octets"
            case .tooLong(let n): return "the host name \"\(n)\" is longer than 253 octets"
            case .invalidCharacter(let n, let c):
                return
                    "the host name \"\(n)\" contains the character \(c.unicodeScalars.map(IDNA.name).joined(separator: " ")), which is not allowed in a host name"
            case .invalidInternationalisedName(let n): return "the internationalised host name \"\(n)\" cannot be converted to an A-label"
            case .notADNSName(let n): return "\"\(n)\" is an IP address, not a DNS name"
            case .idnaRule(let n, let why): return "the internationalised host name \"\(n)\" is not valid: \(why)"
            }
        }
    }
}

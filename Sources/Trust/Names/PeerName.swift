import Foundation

/// The identity a client expects the server to prove: a DNS name or an IP address.
///
/// DNS names are canonicalised before any comparison, so that the same host can
/// never be spelled in a way that slips past a check (pitfall 8): ASCII is
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
    public static func canonicalDNSName(_ raw: String) throws(PeerNameError) -> String {
        var name = raw
        if name.hasSuffix(".") { name.removeLast() }
        guard !name.isEmpty else { throw .empty }
        // Bounded before any IDN work (Punycode is quadratic in a label's length): 253 octets is the
        // DNS limit; 4 bytes per character leaves room for any Unicode spelling of a valid name.
        guard name.utf8.count <= 253 * 4 else { throw .tooLong(String(raw.prefix(64)) + "…") }
        if name.utf8.allSatisfy({ $0 < 0x80 }) { return try canonicalASCIIName(name, raw: raw) }
        // IDNA: map full-width dots to ASCII dots, then NFC-normalise and lower-case.
        let dotted = name.replacingOccurrences(of: "\u{3002}", with: ".")
            .replacingOccurrences(of: "\u{FF0E}", with: ".")
            .replacingOccurrences(of: "\u{FF61}", with: ".")
        let normalised = dotted.precomposedStringWithCanonicalMapping.lowercased()
        var labels: [String] = []
        for label in normalised.split(separator: ".", omittingEmptySubsequences: false) {
            labels.append(try canonicalLabel(String(label), in: raw))
        }
        let result = labels.joined(separator: ".")
        guard result.utf8.count <= 253 else { throw .tooLong(raw) }
        return result
    }

    /// The same result for an all-ASCII name without Foundation's Unicode normalisation: lower-cased
    /// byte by byte, each label checked as ``canonicalLabel(_:in:)`` checks an ASCII label.
    private static func canonicalASCIIName(_ name: String, raw: String) throws(PeerNameError) -> String {
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
            let ok = (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            guard ok else { throw .invalidCharacter(raw, String(UnicodeScalar(byte))) }
            labelLength += 1
        }
        guard labelLength > 0 else { throw .emptyLabel(raw) }
        guard labelLength <= 63 else { throw .labelTooLong(raw) }
        guard bytes.count <= 253 else { throw .tooLong(raw) }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func canonicalLabel(_ label: String, in raw: String) throws(PeerNameError) -> String {
        guard !label.isEmpty else { throw .emptyLabel(raw) }
        if label.unicodeScalars.allSatisfy({ $0.isASCII }) {
            for scalar in label.unicodeScalars {
                let ok = (scalar >= "a" && scalar <= "z") || (scalar >= "0" && scalar <= "9") || scalar == "-" || scalar == "_"
                guard ok else { throw .invalidCharacter(raw, String(scalar)) }
            }
            guard label.utf8.count <= 63 else { throw .labelTooLong(raw) }
            return label
        }
        // A Unicode label: only letters, marks, digits and hyphens may appear (no symbols,
        // spaces, controls or look-alike punctuation); then Punycode.
        for scalar in label.unicodeScalars {
            let props = scalar.properties
            let allowed = props.isAlphabetic || props.generalCategory == .decimalNumber
                || props.generalCategory == .nonspacingMark || props.generalCategory == .spacingMark
                || scalar == "-"
            guard allowed, !props.isWhitespace, !props.isDefaultIgnorableCodePoint else {
                throw .invalidCharacter(raw, String(scalar))
            }
        }
        guard let encoded = Punycode.encode(label) else { throw .invalidInternationalisedName(raw) }
        let aLabel = "xn--" + encoded
        guard aLabel.utf8.count <= 63 else { throw .labelTooLong(raw) }
        return aLabel
    }
}

/// Why a host name could not be used as a peer name.
public enum PeerNameError: Error, Hashable, Sendable, CustomStringConvertible {
    case empty
    case emptyLabel(String)
    case labelTooLong(String)
    case tooLong(String)
    case invalidCharacter(String, String)
    case invalidInternationalisedName(String)
    case notADNSName(String)

    /// Human-readable form.
    public var description: String {
        switch self {
        case .empty: return "the host name is empty"
        case .emptyLabel(let n): return "the host name \"\(n)\" has an empty label"
        case .labelTooLong(let n): return "the host name \"\(n)\" has a label longer than 63 octets"
        case .tooLong(let n): return "the host name \"\(n)\" is longer than 253 octets"
        case .invalidCharacter(let n, let c): return "the host name \"\(n)\" contains the character \(c.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined()) which is not allowed in a host name"
        case .invalidInternationalisedName(let n): return "the internationalised host name \"\(n)\" cannot be converted to an A-label"
        case .notADNSName(let n): return "\"\(n)\" is an IP address, not a DNS name"
        }
    }
}

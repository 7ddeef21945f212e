import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The hosts reached without a proxy: curl's `no_proxy` / `--noproxy` list, matched as curl 7.88 matches it
/// (lib/noproxy.c), with two additions of ours kept from earlier releases and one repair.
///
/// - The list is split at commas and blanks (spaces, tabs); empty entries are skipped.
/// - `*` as the whole list excludes every host (curl: only when the list is exactly `*`; `a,*` is an entry `*`,
///   which matches no host).
/// - A host name (one trailing dot ignored, RFC 1034 §3.1's absolute form) matches an entry equal to it or
///   a domain it is in: `example.com` and `.example.com` both match `example.com` and `www.example.com`, never
///   `notexample.com`; one trailing dot of the entry is ignored too. Case-insensitive.
/// - An IPv4 host matches an IPv4 entry exactly or a CIDR entry `10.0.0.0/8` (a prefix length of 0 or 32 means
///   the address itself, over 32 nothing, as curl's `Curl_cidr4_match`); a host-name entry never matches it.
/// - An IPv6 host matches an IPv6 entry, with or without brackets, exactly or as a CIDR `::1/128`, `fd00::/8`
///   (a prefix length of 0 means 128, as curl's `Curl_cidr6_match`). The repair: curl 7.88 compares an IPv6
///   host with the entries as text, so that `[::1]` and `::1/128` never match `::1` there.
/// - Ours: an entry may end in `:PORT` (`internal.example:8443`, `[::1]:8080`), matching that port only; a
///   leading `*.` reads as `.` (curl matches neither form).
public struct NoProxyList: Sendable, Hashable {
    /// The entries, lowercased, in order.
    public let entries: [String]

    /// The entries of a `no_proxy` value: split at commas, spaces and tabs.
    public init(_ text: String) {
        self.init(entries: text.split { $0 == "," || $0 == " " || $0 == "\t" }.map(String.init))
    }

    /// The given entries (each trimmed of blanks and lowercased; empty ones dropped).
    public init(entries: [String]) {
        self.entries = entries.map { $0.trimmingASCIIBlanks().lowercased() }.filter { !$0.isEmpty }
    }

    /// Whether `host` (a name, or an IP address with or without brackets) on `port` is reached directly.
    public func excludes(host: String, port: Int) -> Bool {
        guard !entries.isEmpty else { return false }
        if entries == ["*"] { return true }
        var name = Substring(host.lowercased())
        if name.hasPrefix("[") && name.hasSuffix("]") { name = name.dropFirst().dropLast() }
        let address = IPAddress(String(name))
        if address == nil, name.hasSuffix(".") { name = name.dropLast() }
        for raw in entries {
            guard let (entry, entryPort) = Self.splitPort(raw[...]), entryPort == nil || entryPort == port else { continue }
            if let address {
                if Self.matches(address, entry) { return true }
            } else if Self.matches(name: name, entry) {
                return true
            }
        }
        return false
    }

    /// An entry without its `:PORT` (ours), and the port; nil for a port that is not one.
    private static func splitPort(_ entry: Substring) -> (Substring, Int?)? {
        if entry.hasPrefix("["), let close = entry.firstIndex(of: "]") {
            let rest = entry[entry.index(after: close)...]
            let inside = entry[entry.index(after: entry.startIndex)..<close]
            if rest.isEmpty { return (inside, nil) }
            // `[fd00::]/8`: the prefix length follows the bracket.
            if rest.hasPrefix("/") { return (Substring(inside + rest), nil) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()) else { return nil }
            return (inside, port)
        }
        // One colon: `host:port` (an IPv6 entry has two or more).
        if entry.utf8.count(where: { $0 == UInt8(ascii: ":") }) == 1, let colon = entry.firstIndex(of: ":") {
            guard let port = Int(entry[entry.index(after: colon)...]) else { return nil }
            return (entry[..<colon], port)
        }
        return (entry, nil)
    }

    /// A host name against a name entry (curl's tail match on a dot boundary).
    private static func matches(name: Substring, _ entry: Substring) -> Bool {
        var entry = entry
        if entry.hasPrefix("*.") { entry = entry.dropFirst() }
        if entry.hasSuffix(".") { entry = entry.dropLast() }
        if entry.hasPrefix(".") { entry = entry.dropFirst() }
        guard !entry.isEmpty else { return false }
        if name == entry { return true }
        return name.count > entry.count && name.hasSuffix(entry) && name.dropLast(entry.count).hasSuffix(".")
    }

    /// An address against an address or CIDR entry of the same family.
    private static func matches(_ address: IPAddress, _ entry: Substring) -> Bool {
        var text = entry
        var bits = 0
        if let slash = entry.firstIndex(of: "/") {
            text = entry[..<slash]
            // curl reads the length with atoi(): its leading digits, 0 without any.
            bits = Int(entry[entry.index(after: slash)...].prefix { $0.isASCII && $0.isNumber }.prefix(4)) ?? 0
        }
        guard let network = IPAddress(String(text)), network.isIPv4 == address.isIPv4 else { return false }
        let width = address.bytes.count * 8
        if address.isIPv4 {
            if bits > 32 { return false }
            if bits == 0 { bits = 32 }
        } else {
            if bits == 0 { bits = 128 }
            if bits > 128 { return false }
        }
        return prefix(address.bytes, network.bytes, bits: min(bits, width))
    }

    /// Whether the first `bits` bits of `a` and `b` are equal.
    private static func prefix(_ a: [UInt8], _ b: [UInt8], bits: Int) -> Bool {
        let whole = bits / 8
        guard a.prefix(whole) == b.prefix(whole) else { return false }
        let rest = bits % 8
        guard rest > 0 else { return true }
        let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - rest))
        return a[whole] & mask == b[whole] & mask
    }
}

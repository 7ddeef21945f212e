/// An IPv4 or IPv6 address as raw network-order bytes (4 or 16 of them).
///
/// Parsing is strict on purpose: a peer name is security input, so forms that
/// different parsers read differently (`0x7f.1`, `0177.0.0.1`, `127.1`, zone ids)
/// are refused rather than guessed at.
public struct IPAddress: Hashable, Sendable, Codable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    /// Creates an address from 4 or 16 raw bytes; `nil` for any other length.
    package init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = Array(bytes)
    }

    /// Parses dotted-quad IPv4 or RFC 4291 IPv6 text (brackets allowed, zone ids not).
    public init?(_ text: String) {
        var text = Substring(text)
        if text.hasPrefix("[") && text.hasSuffix("]") {
            text = text.dropFirst().dropLast()
        }
        if let v4 = Self.parseIPv4(text) {
            self.bytes = v4
        } else if let v6 = Self.parseIPv6(text) {
            self.bytes = v6
        } else {
            return nil
        }
    }

    /// Whether this is an IPv4 address.
    public var isIPv4: Bool { bytes.count == 4 }

    /// Dotted-quad IPv4, or IPv6 in RFC 5952 compressed form.
    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        var groups: [UInt16] = []
        for i in stride(from: 0, to: 16, by: 2) {
            groups.append(UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1]))
        }
        // RFC 5952: compress the longest run (length >= 2) of zero groups.
        var bestStart = -1
        var bestLength = 0
        var index = 0
        while index < 8 {
            if groups[index] == 0 {
                var end = index
                while end < 8 && groups[end] == 0 { end += 1 }
                if end - index > bestLength {
                    bestStart = index
                    bestLength = end - index
                }
                index = end
            } else {
                index += 1
            }
        }
        let hex = groups.map { String($0, radix: 16) }
        if bestLength < 2 { return hex.joined(separator: ":") }
        let head = hex[0..<bestStart].joined(separator: ":")
        let tail = hex[(bestStart + bestLength)...].joined(separator: ":")
        return head + "::" + tail
    }

    /// Four dot-separated decimal octets of one to three digits each, none with a leading zero (octal-looking forms are
    /// ambiguous), as network-order bytes.
    static func parseIPv4(_ text: Substring) -> [UInt8]? {
        guard let value = parseIPv4Value(text) else { return nil }
        return [
            UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
            UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value),
        ]
    }

    /// Whether `text` is a dotted-quad IPv4 address as ``parseIPv4(_:)`` reads it. Such text is already the address's
    /// ``description``: the strict form has one spelling per address. Allocates nothing.
    package static func isIPv4Text(_ text: some StringProtocol) -> Bool {
        parseIPv4Value(Substring(text)) != nil
    }

    /// ``parseIPv4(_:)``'s reading, as one 32-bit value. Read byte by byte with nothing allocated: every request's host
    /// passes here first, and a name fails at its first letter.
    private static func parseIPv4Value(_ text: Substring) -> UInt32? {
        var result: UInt32 = 0
        var octets = 0
        var value = 0
        var digits = 0
        var leadingZero = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if digits == 0 {
                    leadingZero = byte == UInt8(ascii: "0")
                } else if leadingZero {
                    return nil
                }
                digits += 1
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                guard digits <= 3, value <= 255 else { return nil }
            case UInt8(ascii: "."):
                guard digits > 0, octets < 3 else { return nil }
                result = result << 8 | UInt32(value)
                octets += 1
                (value, digits) = (0, 0)
            default:
                return nil
            }
        }
        guard digits > 0, octets == 3 else { return nil }
        return result << 8 | UInt32(value)
    }

    static func parseIPv6(_ text: Substring) -> [UInt8]? {
        guard text.contains(":"), !text.contains("%") else { return nil }
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }

        func groups(_ part: String, allowTrailingIPv4: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            var result: [UInt16] = []
            for (offset, piece) in pieces.enumerated() {
                if allowTrailingIPv4 && offset == pieces.count - 1 && piece.contains(".") {
                    guard let v4 = parseIPv4(piece) else { return nil }
                    result.append(UInt16(v4[0]) << 8 | UInt16(v4[1]))
                    result.append(UInt16(v4[2]) << 8 | UInt16(v4[3]))
                    continue
                }
                guard (1...4).contains(piece.count), let value = UInt16(piece, radix: 16) else { return nil }
                result.append(value)
            }
            return result
        }

        var all: [UInt16]
        if halves.count == 2 {
            guard let head = groups(halves[0], allowTrailingIPv4: false),
                let tail = groups(halves[1], allowTrailingIPv4: true),
                head.count + tail.count <= 7
            else { return nil }
            all = head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            guard let only = groups(halves[0], allowTrailingIPv4: true), only.count == 8 else { return nil }
            all = only
        }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
    }
}

/// Percent-encoding and decoding (RFC 3986 §2.1), as Foundation's `addingPercentEncoding(withAllowedCharacters:)` and
/// `removingPercentEncoding` do them, which are in full Foundation only, not in FoundationEssentials.
extension StringProtocol {
    /// The text with every UTF-8 byte not in `allowed` written as `%XX` (uppercase hexadecimal digits).
    package func percentEncoded(keeping allowed: Set<UInt8>) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        let digits = Array("0123456789ABCDEF".utf8)
        for byte in utf8 {
            if allowed.contains(byte) {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The text with each `%XX` (two hexadecimal digits, either case) replaced by the octet it names; nil when a
    /// `%` is not followed by two hexadecimal digits or the octets are not UTF-8.
    package var percentDecoded: String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var iterator = utf8.makeIterator()
        func digit(_ byte: UInt8?) -> UInt8? {
            switch byte {
            case .some(let byte) where (0x30...0x39).contains(byte): byte - 0x30
            case .some(let byte) where (0x41...0x46).contains(byte): byte - 0x41 + 10
            case .some(let byte) where (0x61...0x66).contains(byte): byte - 0x61 + 10
            default: nil
            }
        }
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = digit(iterator.next()), let low = digit(iterator.next()) else { return nil }
            bytes.append(high << 4 | low)
        }
        // Not UTF-8 when decoding had to repair it (`String(validating:)` needs macOS 15).
        let text = String(decoding: bytes, as: UTF8.self)
        return text.utf8.elementsEqual(bytes) ? text : nil
    }
}

extension Set<UInt8> {
    /// RFC 3986 §2.3's unreserved characters: ALPHA, DIGIT, `-`, `.`, `_`, `~`.
    package static let uriUnreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
    /// What may stand unencoded in a URI's user (Foundation's `.urlUserAllowed`): the unreserved characters and
    /// RFC 3986 §2.2's sub-delims.
    package static let uriUserAllowed = uriUnreserved.union("!$&'()*+,;=".utf8)
}

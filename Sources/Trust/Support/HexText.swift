/// Bytes written as hexadecimal text, two digits a byte (as `String(format: "%02x")` writes them, which is
/// in full Foundation only, not in FoundationEssentials).
extension Sequence<UInt8> {
    /// The bytes as hexadecimal digits, two a byte, joined by `separator`.
    /// - Parameters:
    ///   - separator: what goes between two bytes (`":"` for fingerprints), nothing by default.
    ///   - uppercase: `A`–`F` rather than `a`–`f`.
    package func hexText(separator: String = "", uppercase: Bool = false) -> String {
        let digits = Array((uppercase ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
        var text: [UInt8] = []
        let separatorBytes = Array(separator.utf8)
        for (index, byte) in enumerated() {
            if index > 0 { text += separatorBytes }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

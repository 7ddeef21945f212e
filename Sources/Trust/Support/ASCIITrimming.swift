/// Trimming ASCII blanks from the ends of text, by byte.
///
/// Foundation's `trimmingCharacters(in:)` is in full Foundation only (not in FoundationEssentials), and its
/// `.whitespaces` also takes Unicode spaces (U+00A0, U+3000…). What this package trims — configuration
/// values, pins, `/proc` fields, certdata lines — is ASCII by its grammar, where only SP and HTAB are
/// blanks (RFC 5234 `WSP`) and CR and LF end lines.
extension StringProtocol {
    /// The text without leading or trailing SP and HTAB.
    package func trimmingASCIIBlanks() -> String {
        trimming { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
    }

    /// The text without leading or trailing SP, HTAB, CR and LF.
    package func trimmingASCIIWhitespace() -> String {
        trimming { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }
    }

    /// The text without leading or trailing CR and LF.
    package func trimmingASCIINewlines() -> String {
        trimming { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }
    }

    private func trimming(_ isTrimmed: (UInt8) -> Bool) -> String {
        let bytes = Array(utf8)
        guard let first = bytes.firstIndex(where: { !isTrimmed($0) }), let last = bytes.lastIndex(where: { !isTrimmed($0) }) else {
            return ""
        }
        // Only ASCII bytes are dropped, so both cuts are on scalar boundaries: the rest is the same text.
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}

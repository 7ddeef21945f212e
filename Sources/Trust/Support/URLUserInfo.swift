/// The user-info of URLs written as text (`scheme://USER:PASSWORD@host…`), found and hidden by byte.
///
/// RFC 3986 §3.2.1: user-info is not for display ("applications should not render as clear text any data after
/// the first colon"). Every message that may quote a URL a user or a file wrote — a configuration problem, a
/// refused proxy, a command's own URL — shows it through ``redacted(_:)`` or ``redactingUserInfo(inText:)``.
/// The delimiters are found by byte (RFC 3986 §3.2), so a combining mark after `@` or `/`, which makes one
/// `Character` with it, cannot hide them.
package enum URLUserInfo {
    /// The user-info part of a URL written as text, if any: what lies between `://` and the last `@` before the
    /// authority ends (at `/`, `?` or `#`).
    package static func userInfo(in text: String) -> String? {
        userInfoRange(in: Array(text.utf8)).map { String(decoding: Array(text.utf8)[$0], as: UTF8.self) }
    }

    /// A URL written as text with its user-info, if any, replaced by `***`.
    package static func redacted(_ text: String) -> String {
        var bytes = Array(text.utf8)
        guard let range = userInfoRange(in: bytes) else { return text }
        bytes.replaceSubrange(range, with: Array("***".utf8))
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func userInfoRange(in bytes: [UInt8]) -> Range<Int>? {
        guard let separator = bytes.firstRange(of: Array("://".utf8)) else { return nil }
        let start = separator.upperBound
        let end = bytes[start...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        return bytes[start..<end].lastIndex(of: UInt8(ascii: "@")).map { start..<$0 }
    }

    /// Free text (a message quoting URLs) with the user-info of every `scheme://USERINFO@host` in it replaced by
    /// `***`. An authority ends at `/`, `?`, `#`, a quote or white space.
    package static func redactingUserInfo(inText text: String) -> String {
        let ends: Set<UInt8> = [
            UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "\""), UInt8(ascii: "'"),
            UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"),
        ]
        var bytes = Array(text.utf8)
        var searchFrom = 0
        while let separator = bytes[searchFrom...].firstRange(of: Array("://".utf8)) {
            let start = separator.upperBound
            let end = bytes[start...].firstIndex { ends.contains($0) } ?? bytes.endIndex
            if let at = bytes[start..<end].lastIndex(of: UInt8(ascii: "@")) {
                bytes.replaceSubrange(start..<at, with: Array("***".utf8))
                searchFrom = start + 3
            } else {
                searchFrom = start
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

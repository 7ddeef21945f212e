#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The user-info of URLs written as text (`scheme://USER:PASSWORD@host…`), found and hidden by byte.
///
/// RFC 3986 §3.2.1: user-info is not for display ("applications should not render as clear text any data after
/// the first colon"). Every message that may quote a URL a user or a file wrote — a configuration problem, a
/// refused proxy, a command's own URL, a redirect, an error, a log line — shows it through `redacted(_:)` or
/// ``redactingUserInfo(inText:)``, which apply one rule.
///
/// **The rule.** User-info is everything from `://` to the *last* `@` of the URL-like text that follows it — not
/// to the last `@` before the first `/`, `?` or `#`, where RFC 3986's grammar ends an authority. A password is
/// what a person pasted, and one holding `/`, `?` or `#` (`https://rep:Sl/ash@host/`) is not a valid URL: its
/// RFC authority would end inside the password and leave the rest of it on display. So the authority-like prefix
/// runs up to the last `@`, whatever the password holds. The cost is that an `@` in a path or query
/// (`https://host/@alice`) hides the host too: shown as `https://***@alice`, which says less but never leaks.
///
/// A parsed `URL` is another matter: its authority is what RFC 3986 says it is, and it is what a request uses, so
/// `redacted(_: URL)` hides exactly its user-info and leaves an `@` in its path alone. (A raw `/`, `?` or `#` in a
/// password usually makes the parse fail; where it does not — `https://u:2024/x@h/` is host `u`, port 2024 — the
/// text shown is what the request asks for.)
///
/// The delimiters are found by byte (RFC 3986 §3.2), so a combining mark after `@` or `/`, which makes one
/// `Character` with it, cannot hide them.
package enum URLUserInfo {
    /// The user-info a URL written as text carries, if any — what a caller keeps secret (scrubs from output and
    /// from its argument list): the URL's own (RFC 3986 §3.2.1) when the text parses as a URL with a host, else what
    /// lies between `://` and the last `@` of the text (the redaction rule). A parseable URL with an `@` in its path
    /// (`https://social.example/@alice`) so carries none, and its host is never taken for a secret. An authority that
    /// ends in a bare `:` (`https://u:/pw@h/` parses as host `u` with an empty port) is a password starting with `/`,
    /// `?` or `#`: the redaction rule's.
    package static func userInfo(in text: String) -> String? {
        let bytes = Array(text.utf8)
        if let url = URL(string: text), url.host != nil, !authorityEndsInAColon(bytes) {
            guard url.user(percentEncoded: true) != nil || url.password(percentEncoded: true) != nil else { return nil }
            return rfcUserInfoRange(in: bytes).map { String(decoding: bytes[$0], as: UTF8.self) }
        }
        return userInfoRange(in: bytes, from: 0, endingAt: []).map { String(decoding: bytes[$0], as: UTF8.self) }
    }

    /// A URL written as text with its user-info, if any, replaced by `***`. The whole text is the URL: a space or a
    /// quote in it (a password holding one) does not end it.
    package static func redacted(_ text: String) -> String {
        var bytes = Array(text.utf8)
        guard let range = userInfoRange(in: bytes, from: 0, endingAt: []) else { return text }
        bytes.replaceSubrange(range, with: Array("***".utf8))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A parsed URL as text with its user-info, if it has any, replaced by `***`: the URL's own authority (RFC 3986
    /// §3.2), up to its last `@`.
    package static func redacted(_ url: URL) -> String {
        let text = url.absoluteString
        guard url.user(percentEncoded: true) != nil || url.password(percentEncoded: true) != nil else { return text }
        var bytes = Array(text.utf8)
        guard let range = rfcUserInfoRange(in: bytes) else { return redacted(text) }
        bytes.replaceSubrange(range, with: Array("***".utf8))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The user-info of a parsed URL's text: from `://` to the last `@` before the authority ends (`/`, `?`, `#`).
    private static func rfcUserInfoRange(in bytes: [UInt8]) -> Range<Int>? {
        guard let authority = rfcAuthority(in: bytes) else { return nil }
        return bytes[authority].lastIndex(of: UInt8(ascii: "@")).map { authority.lowerBound..<$0 }
    }

    /// RFC 3986's authority of a URL's text: from `://` to the first `/`, `?` or `#`.
    private static func rfcAuthority(in bytes: [UInt8]) -> Range<Int>? {
        guard let separator = bytes.firstRange(of: Array("://".utf8)) else { return nil }
        let begin = separator.upperBound
        let end = bytes[begin...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        return begin..<end
    }

    private static func authorityEndsInAColon(_ bytes: [UInt8]) -> Bool {
        guard let authority = rfcAuthority(in: bytes), let last = bytes[authority].last else { return false }
        return last == UInt8(ascii: ":")
    }

    /// Bytes that end a URL quoted in free text: white space and the quotes and angle brackets that delimit URLs
    /// in prose (RFC 3986 Appendix C). None of them may stand in a URL unencoded.
    private static let textDelimiters: Set<UInt8> = [
        UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "`"),
        UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), 0x0B, 0x0C,
    ]

    /// Free text (a message quoting URLs) with the user-info of every `scheme://USERINFO@host` in it replaced by
    /// `***`. A quoted URL ends at white space, a quote or an angle bracket.
    package static func redactingUserInfo(inText text: String) -> String {
        var bytes = Array(text.utf8)
        var searchFrom = 0
        var changed = false
        while let separator = bytes[searchFrom...].firstRange(of: Array("://".utf8)) {
            if let range = userInfoRange(in: bytes, from: separator.lowerBound, endingAt: textDelimiters) {
                bytes.replaceSubrange(range, with: Array("***".utf8))
                changed = true
                searchFrom = range.lowerBound + 3
            } else {
                searchFrom = separator.upperBound
            }
        }
        return changed ? String(decoding: bytes, as: UTF8.self) : text
    }

    /// The user-info after the first `://` at or after `start`: up to the last `@` before a byte of `delimiters`
    /// (or the end).
    private static func userInfoRange(in bytes: [UInt8], from start: Int, endingAt delimiters: Set<UInt8>) -> Range<Int>? {
        guard let separator = bytes[start...].firstRange(of: Array("://".utf8)) else { return nil }
        let begin = separator.upperBound
        let end = delimiters.isEmpty ? bytes.endIndex : (bytes[begin...].firstIndex { delimiters.contains($0) } ?? bytes.endIndex)
        return bytes[begin..<end].lastIndex(of: UInt8(ascii: "@")).map { begin..<$0 }
    }
}

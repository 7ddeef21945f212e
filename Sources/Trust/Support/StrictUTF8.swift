/// Strict UTF-8 decoding — `nil` for any byte sequence that is not well-formed UTF-8 (RFC 3629 §3: overlong
/// forms, surrogates, code points above U+10FFFF and truncated sequences included) — that builds at the package's
/// declared minimum platforms: the standard library's `String(validating:as:)` needs macOS 15 / iOS 18.
///
/// `String(decoding:as:)` replaces each ill-formed subsequence with U+FFFD (`EF BF BD`), never with the bytes it
/// replaces, so the decoded text's UTF-8 equals the input exactly when nothing was replaced: when the input was
/// well-formed.
package enum StrictUTF8 {
    /// The text `bytes` encode, or `nil` when they are not well-formed UTF-8.
    package static func string<Bytes: Collection>(_ bytes: Bytes) -> String? where Bytes.Element == UInt8 {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.utf8.elementsEqual(bytes) ? text : nil
    }
}

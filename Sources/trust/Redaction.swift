import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The secrets a `trust get` command line carries — passwords, passphrases, `Authorization` and
/// `Proxy-Authorization` values, URL user-info — kept so that none of them is ever printed.
///
/// Messages are built without them in the first place (URLs are shown with their user-info
/// replaced, request headers with secret values replaced); as a second line of defence every line
/// `trust get` writes to stderr is scrubbed of every secret of ``minimumScrubbedLength`` characters
/// or more (shorter ones would turn ordinary words into asterisks).
struct Secrets: Sendable {
    /// The secret strings, longest first (so a secret containing another is replaced whole).
    private(set) var values: [String] = []

    /// Secrets shorter than this are kept out of messages by construction only.
    static let minimumScrubbedLength = 4

    /// Header fields whose values are credentials (RFC 9110 §11.6.2 and §11.7.2).
    static let credentialHeaders: Set<String> = ["authorization", "proxy-authorization"]

    /// Adds a secret (and its percent-encoded form, as it may appear inside a URL).
    mutating func add(_ secret: String?) {
        guard let secret, !secret.isEmpty else { return }
        var forms = [secret]
        let encoded = secret.percentEncoded(keeping: .uriUserAllowed)
        if encoded != secret { forms.append(encoded) }
        if let decoded = secret.percentDecoded, decoded != secret { forms.append(decoded) }
        // And as lines show it once escaped (DisplayText: a backslash or a control character in the secret).
        let shown = forms.map { DisplayText.escaped($0) }.filter { !forms.contains($0) }
        forms += shown
        // Compared and ordered by bytes, as ``scrub(_:)`` matches them: `é` and `e\u{301}` are both kept.
        for form in forms where !values.contains(where: { $0.utf8.elementsEqual(form.utf8) }) { values.append(form) }
        values.sort { $0.utf8.count > $1.utf8.count }
    }

    /// Adds the password of a `USER:PASSWORD` argument (curl's `-u` and `-U`: split at the first colon).
    mutating func addPassword(ofUserArgument argument: String?) {
        guard let argument, let (_, password) = argument.splitOnce(atASCII: UInt8(ascii: ":")) else { return }
        add(String(password))
    }

    /// Adds the user-info (user and password) of a URL given as text, parsed or not.
    mutating func addUserInfo(ofURL text: String?) {
        guard let text, let userInfo = Self.userInfo(in: text) else { return }
        add(userInfo)
        if let (user, password) = userInfo.splitOnce(atASCII: UInt8(ascii: ":")) {
            add(String(user))
            add(String(password))
        }
    }

    /// `text` with every secret long enough to scrub replaced by `***`. Matched literally (`.literal`):
    /// by default Foundation matches whole `Character`s, and misses a secret followed by a combining mark.
    func scrub(_ text: String) -> String {
        var result = text
        for secret in values where secret.count >= Self.minimumScrubbedLength {
            result = Self.replacingLiterally(secret, in: result)
        }
        return result
    }

    /// `text` with every occurrence of `secret`'s UTF-8 bytes replaced by `***`, left to right, by byte: a secret
    /// followed by a combining mark is still found (Swift's `replacing(_:with:)` compares whole `Character`s).
    static func replacingLiterally(_ secret: String, in text: String) -> String {
        let needle = Array(secret.utf8)
        let bytes = Array(text.utf8)
        guard !needle.isEmpty, bytes.count >= needle.count else { return text }
        var output: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if index + needle.count <= bytes.count, bytes[index..<index + needle.count].elementsEqual(needle) {
                output += Array("***".utf8)
                index += needle.count
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The user-info part of a URL written as text (`scheme://USERINFO@host…`), if any.
    static func userInfo(in text: String) -> String? { URLUserInfo.userInfo(in: text) }

    /// A URL as text with any user-info replaced by `***` (RFC 3986 §3.2.1: user-info is not for display).
    static func redactedURL(_ text: String) -> String { URLUserInfo.redacted(text) }

    /// A URL with any user-info replaced by `***`.
    static func redactedURL(_ url: URL) -> String { URLUserInfo.redacted(url) }

    /// Free text (a message quoting URLs) with the user-info of every `scheme://USERINFO@host` in it replaced
    /// by `***`.
    static func redactingUserInfo(inText text: String) -> String { URLUserInfo.redactingUserInfo(inText: text) }

    /// A header value as shown by `-v`: `***` for credential headers.
    static func displayValue(name: String, value: String) -> String {
        credentialHeaders.contains(name.lowercased()) ? "***" : value
    }
}

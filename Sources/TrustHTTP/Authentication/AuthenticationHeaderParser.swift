/// Parses `WWW-Authenticate` / `Proxy-Authenticate` (a list of challenges) and `Authentication-Info`
/// (a list of parameters) per RFC 9110 §11: several challenges in one field and across fields,
/// token68, quoted strings with escapes, case-insensitive schemes and parameter names.
///
/// A malformed challenge is skipped with a diagnostic; parsing goes on with the next one. The work
/// is linear in the input and bounded: fields longer than ``maximumFieldBytes`` are refused whole,
/// and at most ``maximumChallenges`` challenges, ``maximumParameters`` parameters per challenge and
/// ``maximumDiagnostics`` diagnostics are kept.
package enum AuthenticationHeaderParser {
    /// Field values longer than this many UTF-8 bytes are refused whole.
    package static let maximumFieldBytes = 16 * 1024
    /// The most challenges kept across all the field values; the rest are ignored.
    package static let maximumChallenges = 16
    /// The most parameters a challenge or `Authentication-Info` field may have; one with more is malformed.
    package static let maximumParameters = 32
    /// The most diagnostics kept; later ones are dropped.
    package static let maximumDiagnostics = 32

    /// The challenges of every field value, in order.
    package static func challenges(_ fieldValues: [String]) -> (challenges: [HTTPChallenge], diagnostics: [AuthenticationHeaderDiagnostic]) {
        var challenges: [HTTPChallenge] = []
        var diagnostics: [AuthenticationHeaderDiagnostic] = []
        for value in fieldValues {
            var cursor = Cursor(value, diagnostics: diagnostics)
            cursor.parseChallenges(into: &challenges)
            diagnostics = cursor.diagnostics
        }
        return (challenges, diagnostics)
    }

    /// The challenges of one field value.
    package static func challenges(_ fieldValue: String) -> (challenges: [HTTPChallenge], diagnostics: [AuthenticationHeaderDiagnostic]) {
        challenges([fieldValue])
    }

    /// The parameters of an `Authentication-Info` / `Proxy-Authentication-Info` field (`#auth-param`).
    /// A malformed field yields no parameters and a diagnostic.
    package static func parameters(_ fieldValue: String) -> (parameters: [(name: String, value: String)], diagnostics: [AuthenticationHeaderDiagnostic]) {
        var cursor = Cursor(fieldValue, diagnostics: [])
        let parameters = cursor.parseParameterList()
        return (parameters ?? [], cursor.diagnostics)
    }

    /// `value` as a quoted-string (`"` and `\` escaped, RFC 9110 §5.6.4). Escapes by Unicode scalar,
    /// not by `Character`: a quote followed by a combining mark is one `Character` that is not `"`, and
    /// left unescaped it would end the string early and let the rest be read as more parameters.
    package static func quoted(_ value: String) -> String {
        var out = String.UnicodeScalarView()
        out.append("\"")
        for scalar in value.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { out.append("\\") }
            out.append(scalar)
        }
        out.append("\"")
        return String(out)
    }

    // MARK: - Character classes (RFC 9110 §5.6)

    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    static func isToken68Byte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    /// A byte allowed inside a quoted-string, unescaped (qdtext) or after a backslash (quoted-pair).
    static func isQuotedTextByte(_ byte: UInt8) -> Bool {
        byte == 0x09 || (byte >= 0x20 && byte != 0x7F)
    }

    // MARK: - The cursor

    struct Cursor {
        let bytes: [UInt8]
        var index = 0
        var diagnostics: [AuthenticationHeaderDiagnostic]

        init(_ value: String, diagnostics: [AuthenticationHeaderDiagnostic]) {
            let utf8 = value.utf8
            let tooLong = utf8.count > AuthenticationHeaderParser.maximumFieldBytes
            self.bytes = tooLong ? [] : Array(utf8)
            self.diagnostics = diagnostics
            if tooLong { note("field of \(utf8.count) bytes refused (limit \(AuthenticationHeaderParser.maximumFieldBytes))") }
        }

        var atEnd: Bool { index >= bytes.count }
        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func note(_ message: String) {
            if diagnostics.count < AuthenticationHeaderParser.maximumDiagnostics {
                diagnostics.append(AuthenticationHeaderDiagnostic(offset: index, message: message))
            }
        }

        mutating func skipWhitespace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 { index += 1 }
        }

        mutating func skipWhitespaceAndCommas() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == UInt8(ascii: ",") { index += 1 }
        }

        /// Skips to the next comma outside a quoted-string (or the end).
        mutating func skipElement() {
            var quoted = false
            while let byte = peek {
                if quoted {
                    if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") { quoted = false }
                } else if byte == UInt8(ascii: "\"") {
                    quoted = true
                } else if byte == UInt8(ascii: ",") {
                    return
                }
                index += 1
            }
        }

        mutating func token() -> String? {
            let start = index
            while let byte = peek, AuthenticationHeaderParser.isTokenByte(byte) { index += 1 }
            guard index > start else { return nil }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// token68 followed by optional whitespace and then a comma or the end; otherwise nothing is consumed.
        mutating func token68() -> String? {
            let start = index
            while let byte = peek, AuthenticationHeaderParser.isToken68Byte(byte) { index += 1 }
            guard index > start else { return nil }
            while peek == UInt8(ascii: "=") { index += 1 }
            let end = index
            skipWhitespace()
            guard atEnd || peek == UInt8(ascii: ",") else {
                index = start
                return nil
            }
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }

        /// A quoted-string, unescaped; nil (with a diagnostic) if it is unterminated or holds a control character.
        mutating func quotedString() -> String? {
            guard peek == UInt8(ascii: "\"") else { return nil }
            index += 1
            var value: [UInt8] = []
            var problem: String?
            // Scans to the closing quote even past a bad byte, so the next element is found where it starts.
            while let byte = peek {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    if let problem {
                        note(problem)
                        return nil
                    }
                    return String(decoding: value, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = peek else { continue }
                    if !AuthenticationHeaderParser.isQuotedTextByte(escaped) { problem = problem ?? "control character escaped in a quoted string" }
                    value.append(escaped)
                    index += 1
                default:
                    if !AuthenticationHeaderParser.isQuotedTextByte(byte) { problem = problem ?? "control character in a quoted string" }
                    value.append(byte)
                }
            }
            note("unterminated quoted string")
            return nil
        }

        /// `token BWS "=" BWS ( token / quoted-string )`.
        mutating func parameter() -> (name: String, value: String)? {
            guard let name = token() else {
                note("expected a parameter name")
                return nil
            }
            skipWhitespace()
            guard peek == UInt8(ascii: "=") else {
                note("expected '=' after parameter \(name)")
                return nil
            }
            index += 1
            skipWhitespace()
            if peek == UInt8(ascii: "\"") {
                guard let value = quotedString() else { return nil }
                return (name.lowercased(), value)
            }
            guard let value = token() else {
                note("expected a value for parameter \(name)")
                return nil
            }
            return (name.lowercased(), value)
        }

        /// Whether the list element starting at `position` is a parameter (`token BWS "="`) rather than a new challenge.
        func elementIsParameter(at position: Int) -> Bool {
            var i = position
            while i < bytes.count, AuthenticationHeaderParser.isTokenByte(bytes[i]) { i += 1 }
            guard i > position else { return false }
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 }
            return i < bytes.count && bytes[i] == UInt8(ascii: "=")
        }

        mutating func parseChallenges(into challenges: inout [HTTPChallenge]) {
            while true {
                skipWhitespaceAndCommas()
                guard !atEnd else { return }
                guard challenges.count < AuthenticationHeaderParser.maximumChallenges else {
                    note("more than \(AuthenticationHeaderParser.maximumChallenges) challenges; the rest is ignored")
                    return
                }
                guard let scheme = token() else {
                    note("expected an authentication scheme")
                    skipElement()
                    continue
                }
                if atEnd || peek == UInt8(ascii: ",") {
                    challenges.append(HTTPChallenge(scheme: scheme))
                    continue
                }
                guard peek == 0x20 || peek == 0x09 else {
                    note(peek == UInt8(ascii: "=") ? "parameter \(scheme) outside a challenge" : "expected a space after scheme \(scheme)")
                    skipElement()
                    continue
                }
                skipWhitespace()
                if atEnd || peek == UInt8(ascii: ",") {
                    challenges.append(HTTPChallenge(scheme: scheme))
                    continue
                }
                if let token68 = token68() {
                    challenges.append(HTTPChallenge(scheme: scheme, token68: token68))
                    continue
                }
                if let parameters = parseParameters(scheme: scheme) {
                    challenges.append(HTTPChallenge(scheme: scheme, parameters: parameters))
                } else {
                    skipElement()
                }
            }
        }

        /// The parameters of one challenge; stops before the next challenge. Nil if malformed.
        mutating func parseParameters(scheme: String?) -> [(name: String, value: String)]? {
            var parameters: [(name: String, value: String)] = []
            var names = Set<String>()
            while true {
                guard let parameter = parameter() else { return nil }
                guard names.insert(parameter.name).inserted else {
                    note("parameter \(parameter.name) repeated" + (scheme.map { " in a \($0) challenge" } ?? ""))
                    return nil
                }
                guard parameters.count < AuthenticationHeaderParser.maximumParameters else {
                    note("more than \(AuthenticationHeaderParser.maximumParameters) parameters")
                    return nil
                }
                parameters.append(parameter)
                skipWhitespace()
                if atEnd { return parameters }
                guard peek == UInt8(ascii: ",") else {
                    note("expected ',' after parameter \(parameter.name)")
                    return nil
                }
                // The next list element: another parameter of this challenge, or a new challenge?
                var next = index
                while next < bytes.count, bytes[next] == 0x20 || bytes[next] == 0x09 || bytes[next] == UInt8(ascii: ",") { next += 1 }
                if next >= bytes.count {
                    index = next
                    return parameters
                }
                guard scheme == nil || elementIsParameter(at: next) else { return parameters }
                index = next
            }
        }

        /// `#auth-param` (Authentication-Info): the whole field.
        mutating func parseParameterList() -> [(name: String, value: String)]? {
            skipWhitespaceAndCommas()
            if atEnd { return [] }
            return parseParameters(scheme: nil)
        }
    }
}

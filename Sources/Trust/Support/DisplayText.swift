/// Text that is safe to show to a person or to write into a log line, even where a peer chose part of
/// it: a certificate's subject, issuer and subjectAltNames, a response's header fields, reason phrase
/// or `Location`, a CRL's or an OCSP responder's texts.
///
/// ``escaped(_:)`` is the one sanitiser. It shows, never interprets:
/// - C0 controls U+0000–U+001F (NUL, BEL, BS, TAB, LF, CR, ESC…) and DEL (U+007F) as `\xNN` — ESC starts
///   terminal control sequences (ECMA-48 §5.3: colours, cursor moves, an OSC window-title change), CR and
///   LF end a line and so forge one in a log. TAB is escaped too: it is not visible as itself, it moves
///   the cursor by a width the terminal chooses (enough to push the rest of a line out of view or to
///   fake a column), and no certificate name or header value needs one to be read;
/// - C1 controls U+0080–U+009F as `\u{NNNN}` — U+009B is CSI and U+009D OSC on terminals that take 8-bit
///   controls (ECMA-48 §5.3);
/// - the Unicode bidirectional formatting characters (UAX #9 §2: embeddings and overrides U+202A–U+202E,
///   isolates U+2066–U+2069, marks U+200E, U+200F, U+061C) as `\u{NNNN}` — they reorder what follows
///   them on screen ("Trojan Source", CVE-2021-42574), so a name reads as another;
/// - LINE SEPARATOR and PARAGRAPH SEPARATOR (U+2028, U+2029), which end a line in some viewers;
/// - a backslash as `\\`, so that the escaped form is unambiguous: `\x1b` in the output is always an
///   ESC of the input, `\\x1b` the four characters.
///
/// Everything else — any other printable text, "é", "名前" — is kept as it is. `escaped(utf8:)` does the
/// same for raw bytes and shows bytes that are not valid UTF-8 (RFC 3629) as `\xNN`.
///
/// JSON output needs none of this (its encoder escapes every control character, RFC 8259 §7) and must not
/// get it: a JSON document carries the exact name.
///
/// A `DisplayText` built by string interpolation escapes every interpolated value and keeps its literal
/// parts (the program's own text) as written: `DisplayText("expired: \(subject)")`. A value that is
/// already display text goes in as `\(escaped: text)`, so that it is not escaped twice.
public struct DisplayText: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// The text, safe to show.
    public let description: String

    /// Text that is already safe to show (a literal, or a ``DisplayText`` built by interpolation).
    package init(_ text: DisplayText) { self = text }

    /// A literal: the program's own text, kept as written.
    public init(stringLiteral value: String) { description = value }

    /// The text built by interpolation: literals as written, every interpolated value escaped.
    public init(stringInterpolation: StringInterpolation) { description = stringInterpolation.text }

    /// Builds a ``DisplayText``: literal segments kept, interpolated values escaped.
    public struct StringInterpolation: StringInterpolationProtocol, Sendable {
        var text = ""

        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + 16 * interpolationCount)
        }

        /// The program's own text.
        public mutating func appendLiteral(_ literal: String) { text += literal }

        /// A value, shown through ``DisplayText/escaped(_:)``.
        public mutating func appendInterpolation<Value>(_ value: Value) {
            text += DisplayText.escaped(String(describing: value))
        }

        /// Text that is already display text (a ``DisplayText``), kept as it is.
        package mutating func appendInterpolation(_ value: DisplayText) { text += value.description }

        /// Text that is already escaped (a description this module renders through ``DisplayText``), kept
        /// as it is: escaping it again would double its backslashes.
        package mutating func appendInterpolation(escaped value: String) { text += value }
    }

    /// `text` with every control character, bidirectional formatting character, line or paragraph
    /// separator and backslash escaped (see above); `text` itself when it holds none of them.
    public static func escaped(_ text: some StringProtocol) -> String {
        // Most text holds no byte that can need escaping (every such scalar starts with one of these
        // bytes: C0, `\`, DEL, or a non-ASCII lead byte): then it is returned as it is.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x5C || $0 >= 0x7F }) else { return String(text) }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars { append(scalar, to: &out) }
        return out
    }

    /// Raw bytes as text: valid UTF-8 sequences decoded and escaped as ``escaped(_:)`` does, each byte of
    /// an invalid sequence (RFC 3629 §3: a stray continuation byte, an overlong form, a surrogate, a
    /// truncated sequence) as `\xNN`.
    package static func escaped(utf8 bytes: some Collection<UInt8>) -> String {
        var out = ""
        out.reserveCapacity(bytes.count + 8)
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var index = bytes.startIndex
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                append(Unicode.UTF8.decode(encoded), to: &out)
                index = bytes.index(index, offsetBy: encoded.count)
            case .error(let length):
                for _ in 0..<length {
                    appendByte(bytes[index], to: &out)
                    index = bytes.index(after: index)
                }
            case .emptyInput:
                return out
            }
        }
    }

    /// The last line of defence for lines about to reach a terminal or a log, whoever wrote them: every
    /// character ``escaped(_:)`` escapes is escaped the same way, except a backslash (text that already went
    /// through ``escaped(_:)`` comes out unchanged, never escaped twice) and a line feed (a message of several
    /// lines stays several lines). Text a peer chose should still go through ``escaped(_:)`` where it is
    /// placed, which also escapes line feeds; this catches what a message forgot.
    package static func neutralizingControls(_ text: some StringProtocol) -> String {
        guard containsUnsafeCharacter(text) else { return String(text) }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            if scalar == "\\" || scalar == "\n" { out.unicodeScalars.append(scalar) } else { append(scalar, to: &out) }
        }
        return out
    }

    /// Whether `text` holds a character ``escaped(_:)`` would escape, other than a backslash: a raw
    /// control, bidirectional formatting character or line separator. Output made safe holds none.
    package static func containsUnsafeCharacter(_ text: some StringProtocol) -> Bool {
        text.unicodeScalars.contains { $0 != "\\" && needsEscaping($0) }
    }

    /// Whether ``escaped(_:)`` shows `scalar` escaped.
    package static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x5C, 0x7F...0x9F: return true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true  // UAX #9 formatting characters
        case 0x2028, 0x2029: return true  // LINE SEPARATOR, PARAGRAPH SEPARATOR
        default: return false
        }
    }

    private static let hexDigits: [Character] = Array("0123456789abcdef")

    private static func append(_ scalar: Unicode.Scalar, to out: inout String) {
        guard needsEscaping(scalar) else {
            out.unicodeScalars.append(scalar)
            return
        }
        switch scalar.value {
        case 0x5C: out += "\\\\"
        case 0x00...0x1F, 0x7F: appendByte(UInt8(scalar.value), to: &out)
        default:
            // `\u{NNNN}` (upper-case hex, at least four digits: the form of U+NNNN).
            var digits = String(scalar.value, radix: 16, uppercase: true)
            while digits.utf8.count < 4 { digits = "0" + digits }
            out += "\\u{" + digits + "}"
        }
    }

    private static func appendByte(_ byte: UInt8, to out: inout String) {
        out += "\\x"
        out.append(hexDigits[Int(byte >> 4)])
        out.append(hexDigits[Int(byte & 0x0F)])
    }
}

import Trust

/// A strict reader of the XML that an Android Network Security Config is written in: elements, attributes,
/// character data, the five predefined entities and character references, CDATA sections and comments (XML 1.0
/// fifth edition, §2–§4), after ``NetworkSecurityConfigPreflight`` has refused processing instructions and DTDs.
///
/// Hand-written because nothing on the dependency list reads XML but FoundationXML, which needs full Foundation
/// (ICU's data in every `trust` binary, and a second ICU through libxml2) and cannot be given hostile input as it is
/// (see the preflight). Unlike libxml2 in the recovery mode FoundationXML uses, this reader never recovers: the first
/// thing that is not well-formed (XML 1.0 §2.1) ends the read with its line, so what it hands on is what the file
/// says. Namespaces are not processed: a prefixed name is read whole (`tools:ignore`), as `XMLParser` reports it
/// without `shouldProcessNamespaces`.
struct XMLSubsetReader {
    /// Something the document says, in order.
    enum Event: Equatable {
        /// A start tag (or an empty-element tag, followed by its ``end(_:)``), with its attributes' values normalised
        /// (§3.3.3) and their references replaced.
        case start(String, [String: String])
        /// Character data, references replaced, line ends normalised to LF (§2.11); CDATA sections' text as it is.
        case text(String)
        /// An end tag.
        case end(String)
    }

    /// Why the document is not well-formed, and where.
    struct SyntaxError: Error, Equatable, CustomStringConvertible {
        /// The line (from 1) where the reader stopped.
        var line: Int
        /// What is wrong.
        var message: String
        var description: String { "line \(line): \(message)" }
    }

    /// Elements may nest this deep and no deeper (an NSC needs five).
    static let maximumDepth = 64

    private let bytes: [UInt8]
    private var index = 0

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The events of the document `bytes` (UTF-8, already through the preflight), or the first syntax error.
    static func events(_ bytes: [UInt8]) throws(SyntaxError) -> [Event] {
        var reader = XMLSubsetReader(bytes)
        return try reader.document()
    }

    // MARK: - Grammar

    /// `document ::= prolog element Misc*` (§2.1), the prolog without a DTD.
    private mutating func document() throws(SyntaxError) -> [Event] {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        if starts("<?xml") {
            // Checked byte by byte by the preflight (§2.8); only its end is needed here.
            guard let end = find("?>") else { throw error("an XML declaration without its end") }
            index = end + 2
        }
        try misc()
        guard starts("<"), index + 1 < bytes.count, isNameStart(at: index + 1) else { throw error("no root element") }
        var events: [Event] = []
        try element(into: &events)
        try misc()
        guard index == bytes.count else { throw error("content after the root element") }
        return events
    }

    /// `Misc ::= Comment | PI | S` (§2.8), without processing instructions (refused by the preflight).
    private mutating func misc() throws(SyntaxError) {
        while index < bytes.count {
            if isSpace(bytes[index]) {
                index += 1
            } else if starts("<!--") {
                try comment()
            } else {
                return
            }
        }
    }

    /// An element from its `<` (§3.1), with everything in it; the open elements are kept in a stack, not in the call
    /// stack, so depth costs no recursion.
    private mutating func element(into events: inout [Event]) throws(SyntaxError) {
        var open: [String] = []
        repeat {
            if starts("</") {
                index += 2
                let name = try self.name()
                skipSpace()
                try expect(">")
                guard open.last == name else {
                    throw error("the end tag </\(DisplayText.escaped(name))> does not close <\(DisplayText.escaped(open.last ?? ""))>")
                }
                open.removeLast()
                events.append(.end(name))
            } else if starts("<!--") {
                try comment()
            } else if starts("<![CDATA[") {
                index += 9
                guard let end = find("]]>") else { throw error("a CDATA section without its end") }
                try checkCharacters(index..<end)
                events.append(.text(lineEndsNormalised(String(decoding: bytes[index..<end], as: UTF8.self))))
                index = end + 3
            } else if starts("<") {
                index += 1
                let name = try self.name()
                let attributes = try self.attributes()
                if starts("/>") {
                    index += 2
                    events.append(.start(name, attributes))
                    events.append(.end(name))
                } else {
                    try expect(">")
                    guard open.count < Self.maximumDepth else { throw error("elements nested more than \(Self.maximumDepth) deep") }
                    open.append(name)
                    events.append(.start(name, attributes))
                }
            } else {
                let text = try characterData()
                if !text.isEmpty { events.append(.text(text)) }
            }
            if !open.isEmpty && index >= bytes.count { throw error("the document ends inside <\(DisplayText.escaped(open.last ?? ""))>") }
        } while !open.isEmpty
    }

    /// `(S Attribute)* S?` up to `>` or `/>` (§3.1), each value read by ``attributeValue()``; a name given twice
    /// is an error (§3.1, "Unique Att Spec").
    private mutating func attributes() throws(SyntaxError) -> [String: String] {
        var attributes: [String: String] = [:]
        while true {
            let spaced = skipSpace()
            if starts(">") || starts("/>") { return attributes }
            guard spaced, index < bytes.count, isNameStart(at: index) else { throw error("a malformed start tag") }
            let name = try self.name()
            skipSpace()
            try expect("=")
            skipSpace()
            let value = try attributeValue()
            guard attributes.updateValue(value, forKey: name) == nil else { throw error("the attribute \(DisplayText.escaped(name)) is given twice") }
        }
    }

    /// `AttValue ::= '"' ([^<&"] | Reference)* '"' | "'" ([^<&'] | Reference)* "'"` (§2.3), normalised as for CDATA
    /// attributes (§3.3.3): each space character (tab, CR, LF; CR LF as one) becomes a space.
    private mutating func attributeValue() throws(SyntaxError) -> String {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
            throw error("an attribute value without quotes")
        }
        let quote = bytes[index]
        index += 1
        var value: [UInt8] = []
        while index < bytes.count, bytes[index] != quote {
            switch bytes[index] {
            case UInt8(ascii: "<"):
                throw error("a < in an attribute value")
            case UInt8(ascii: "&"):
                value += try reference()
            case 0x0D:
                value.append(0x20)
                index += index + 1 < bytes.count && bytes[index + 1] == 0x0A ? 2 : 1
            case 0x09, 0x0A:
                value.append(0x20)
                index += 1
            default:
                try checkCharacter(at: index)
                value.append(bytes[index])
                index += 1
            }
        }
        guard index < bytes.count else { throw error("an attribute value without its closing quote") }
        index += 1
        return String(decoding: value, as: UTF8.self)
    }

    /// `CharData ::= [^<&]* - ([^<&]* ']]>' [^<&]*)` with references (§2.4, §4.1), up to the next `<`.
    private mutating func characterData() throws(SyntaxError) -> String {
        var text: [UInt8] = []
        while index < bytes.count, bytes[index] != UInt8(ascii: "<") {
            if bytes[index] == UInt8(ascii: "&") {
                text += try reference()
            } else {
                if starts("]]>") { throw error("]]> in character data") }
                try checkCharacter(at: index)
                text.append(bytes[index])
                index += 1
            }
        }
        return lineEndsNormalised(String(decoding: text, as: UTF8.self))
    }

    /// `&lt;`, `&gt;`, `&amp;`, `&apos;`, `&quot;` (§4.6), `&#N;` or `&#xH;` naming a `Char` (§4.1, §2.2): the UTF-8
    /// bytes it stands for. Any other entity is undeclared (there is no DTD to declare it): an error.
    private mutating func reference() throws(SyntaxError) -> [UInt8] {
        let start = index
        guard let semicolon = bytes[index...].prefix(16).firstIndex(of: UInt8(ascii: ";")) else { throw error("an & that starts no reference") }
        let body = String(decoding: bytes[(start + 1)..<semicolon], as: UTF8.self)
        index = semicolon + 1
        switch body {
        case "lt": return [UInt8(ascii: "<")]
        case "gt": return [UInt8(ascii: ">")]
        case "amp": return [UInt8(ascii: "&")]
        case "apos": return [UInt8(ascii: "'")]
        case "quot": return [UInt8(ascii: "\"")]
        default: break
        }
        let value: UInt32?
        if body.hasPrefix("#x") {
            let digits = body.dropFirst(2)
            value = digits.allSatisfy(\.isHexDigit) ? UInt32(digits, radix: 16) : nil
        } else if body.hasPrefix("#") {
            let digits = body.dropFirst()
            value = digits.allSatisfy { $0.isASCII && $0.isNumber } ? UInt32(digits) : nil
        } else {
            throw error("the undeclared entity &\(DisplayText.escaped(body));")
        }
        guard let value, Self.isChar(value), let scalar = Unicode.Scalar(value) else {
            throw error("the character reference &\(DisplayText.escaped(body)); names no XML character")
        }
        return Array(String(Character(scalar)).utf8)
    }

    /// `Comment ::= '<!--' ((Char - '-') | ('-' (Char - '-')))* '-->'` (§2.5): no `--` inside.
    private mutating func comment() throws(SyntaxError) {
        index += 4
        guard let end = find("--") else { throw error("a comment without its end") }
        guard end + 2 < bytes.count, bytes[end + 2] == UInt8(ascii: ">") else { throw error("-- inside a comment") }
        try checkCharacters(index..<end)
        index = end + 3
    }

    /// `Name ::= NameStartChar (NameChar)*` (§2.3).
    private mutating func name() throws(SyntaxError) -> String {
        guard index < bytes.count, isNameStart(at: index) else { throw error("a name was expected") }
        let start = index
        while index < bytes.count, isNameChar(at: index) {
            index += bytes[index] < 0x80 ? 1 : scalarLength(bytes[index])
        }
        return String(decoding: bytes[start..<min(index, bytes.count)], as: UTF8.self)
    }

    // MARK: - Characters

    /// `NameStartChar` (§2.3): ASCII letters, `_`, `:`, or any non-ASCII scalar in the production's ranges.
    private func isNameStart(at offset: Int) -> Bool {
        let byte = bytes[offset]
        if byte < 0x80 { return isASCIILetter(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") }
        guard let scalar = scalar(at: offset) else { return false }
        switch scalar {
        case 0xC0...0xD6, 0xD8...0xF6, 0xF8...0x2FF, 0x370...0x37D, 0x37F...0x1FFF, 0x200C...0x200D, 0x2070...0x218F,
            0x2C00...0x2FEF, 0x3001...0xD7FF, 0xF900...0xFDCF, 0xFDF0...0xFFFD, 0x10000...0xEFFFF:
            return true
        default:
            return false
        }
    }

    /// `NameChar` (§2.3): a `NameStartChar`, `-`, `.`, a digit, U+00B7, U+0300–U+036F or U+203F–U+2040.
    private func isNameChar(at offset: Int) -> Bool {
        if isNameStart(at: offset) { return true }
        let byte = bytes[offset]
        if byte < 0x80 { return byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || (0x30...0x39).contains(byte) }
        guard let scalar = scalar(at: offset) else { return false }
        return scalar == 0xB7 || (0x300...0x36F).contains(scalar) || (0x203F...0x2040).contains(scalar)
    }

    /// `Char` (§2.2): tab, LF, CR, and U+0020 on but for surrogates and U+FFFE, U+FFFF.
    private static func isChar(_ value: UInt32) -> Bool {
        value == 0x09 || value == 0x0A || value == 0x0D || (0x20...0xD7FF).contains(value) || (0xE000...0xFFFD).contains(value)
            || (0x10000...0x10FFFF).contains(value)
    }

    /// Throws unless the byte at `offset` starts a `Char`: the text is UTF-8 (the preflight checked), so only ASCII
    /// controls and U+FFFE/U+FFFF can fail.
    private func checkCharacter(at offset: Int) throws(SyntaxError) {
        let byte = bytes[offset]
        if byte < 0x80 {
            guard Self.isChar(UInt32(byte)) else { throw error("the control character U+\([byte].hexText(uppercase: true)), not allowed in XML") }
        } else if byte == 0xEF, let scalar = scalar(at: offset), scalar == 0xFFFE || scalar == 0xFFFF {
            throw error("U+\(String(scalar, radix: 16, uppercase: true)), not allowed in XML")
        }
    }

    private func checkCharacters(_ range: Range<Int>) throws(SyntaxError) {
        for offset in range { try checkCharacter(at: offset) }
    }

    /// The scalar whose UTF-8 starts at `offset` (valid UTF-8: the preflight checked).
    private func scalar(at offset: Int) -> UInt32? {
        let length = scalarLength(bytes[offset])
        guard length > 1, offset + length <= bytes.count else { return nil }
        var value = UInt32(bytes[offset]) & (0xFF >> (length + 1))
        for continuation in bytes[(offset + 1)..<(offset + length)] { value = value << 6 | UInt32(continuation & 0x3F) }
        return value
    }

    private func scalarLength(_ lead: UInt8) -> Int {
        lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
    }

    private func isASCIILetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }

    private func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }

    /// CR LF and a lone CR as LF (§2.11).
    private func lineEndsNormalised(_ text: String) -> String {
        guard text.utf8.contains(0x0D) else { return text }
        var bytes: [UInt8] = []
        var previousWasCR = false
        for byte in text.utf8 {
            if byte == 0x0A && previousWasCR {
                previousWasCR = false
                continue
            }
            previousWasCR = byte == 0x0D
            bytes.append(byte == 0x0D ? 0x0A : byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - Reading

    private func starts(_ text: String) -> Bool {
        let pattern = text.utf8
        return index + pattern.count <= bytes.count && bytes[index..<index + pattern.count].elementsEqual(pattern)
    }

    /// The offset of the next `text` from the current position.
    private func find(_ text: String) -> Int? {
        let pattern = Array(text.utf8)
        guard bytes.count >= pattern.count else { return nil }
        var offset = index
        while offset + pattern.count <= bytes.count {
            if bytes[offset] == pattern[0], bytes[offset..<offset + pattern.count].elementsEqual(pattern) { return offset }
            offset += 1
        }
        return nil
    }

    @discardableResult
    private mutating func skipSpace() -> Bool {
        let start = index
        while index < bytes.count, isSpace(bytes[index]) { index += 1 }
        return index > start
    }

    private mutating func expect(_ text: String) throws(SyntaxError) {
        guard starts(text) else { throw error("\(text) was expected") }
        index += text.utf8.count
    }

    private func error(_ message: String) -> SyntaxError {
        SyntaxError(line: bytes[..<min(index, bytes.count)].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }, message: message)
    }
}

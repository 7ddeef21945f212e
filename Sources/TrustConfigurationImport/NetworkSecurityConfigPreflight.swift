import Trust

/// The byte-level check an Android Network Security Config passes before ``XMLSubsetReader`` reads it.
///
/// Written when the file went to FoundationXML's `XMLParser` (libxml2 in recovery mode), which could not be given
/// hostile input as it is (each found by `Fuzz/FuzzConfiguration`): it trapped on names that are not UTF-8, read a
/// null pointer for a processing instruction without data (`<?name?>`), and after a syntax error went on parsing
/// from a point a scanner cannot predict, with entities declared in a DTD expanded. The reader that replaced it
/// (FoundationXML needs full Foundation and ICU) refuses all of that itself; this check stays in front of it
/// because it names the reason precisely, and so that the subset stays what it was:
/// - the text is UTF-8 (RFC 3629) without U+0000 (not an XML `Char`, XML 1.0 §2.2) — so no detection of UTF-16,
///   UTF-32 or EBCDIC from the first bytes (XML 1.0 Appendix F) can apply;
/// - an XML declaration, if there is one, is at the very start and matches XML 1.0 §2.8 exactly, and its encoding
///   (§4.3.3), if named, is UTF-8 (or `UTF8`);
/// - no other `<?` appears anywhere, comments and CDATA sections included;
/// - every `<!` begins a comment or a CDATA section: no DOCTYPE, hence no entity, notation or external subset.
///
/// A Network Security Config (an Android XML resource, UTF-8) needs none of what is refused.
enum NetworkSecurityConfigPreflight {
    /// Throws the first reason `bytes` may not be read as a Network Security Config.
    static func check(_ bytes: [UInt8]) throws(TrustConfigurationImporter.ImportError) {
        guard StrictUTF8.string(bytes) != nil else { throw refusal("is not UTF-8 text") }
        if let offset = bytes.firstIndex(of: 0) { throw refusal("has a NUL byte at byte \(offset)") }
        var index = bytes.starts(with: byteOrderMark) ? byteOrderMark.count : 0
        if matches(declarationStart, at: index, in: bytes) && index + declarationStart.count < bytes.count
            && isSpace(bytes[index + declarationStart.count])
        {
            var reader = DeclarationReader(bytes: bytes, index: index + declarationStart.count)
            guard let end = reader.read() else {
                throw refusal("has an XML declaration that is not `<?xml version=\"1.x\" encoding=\"UTF-8\" standalone=\"yes|no\"?>` (XML 1.0 §2.8)")
            }
            index = end
        }
        while let open = bytes[index...].firstIndex(of: UInt8(ascii: "<")) {
            index = open + 1
            guard index < bytes.count else { break }
            if bytes[index] == UInt8(ascii: "?") {
                throw refusal("has a processing instruction at byte \(open) (only a leading <?xml …?> declaration is accepted)")
            }
            if bytes[index] == UInt8(ascii: "!") && !matches(commentRest, at: index, in: bytes) && !matches(cdataRest, at: index, in: bytes) {
                throw refusal("has a DTD or declaration at byte \(open) (only comments and CDATA sections may begin with <!)")
            }
        }
    }

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    private static let declarationStart = Array("<?xml".utf8)
    private static let commentRest = Array("!--".utf8)
    private static let cdataRest = Array("![CDATA[".utf8)

    private static func refusal(_ words: String) -> TrustConfigurationImporter.ImportError {
        TrustConfigurationImporter.ImportError(message: "the Network Security Config " + words)
    }

    private static func matches(_ pattern: [UInt8], at index: Int, in bytes: [UInt8]) -> Bool {
        index + pattern.count <= bytes.count && bytes[index..<index + pattern.count].elementsEqual(pattern)
    }

    /// `S` of XML 1.0 §2.3.
    fileprivate static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
}

/// Reads the rest of an XML declaration after `<?xml`, by XML 1.0 §2.8 and §2.9:
/// `VersionInfo EncodingDecl? SDDecl? S? '?>'`.
private struct DeclarationReader {
    let bytes: [UInt8]
    var index: Int

    /// The offset just after `?>`, or nil when the declaration is not exactly the grammar's (or names an
    /// encoding other than UTF-8).
    mutating func read() -> Int? {
        guard let version = attribute("version"), isVersion(version) else { return nil }
        if let encoding = attribute("encoding"), !isUTF8(encoding) { return nil }
        if let standalone = attribute("standalone"), standalone != Array("yes".utf8), standalone != Array("no".utf8) { return nil }
        skipSpace()
        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "?"), bytes[index + 1] == UInt8(ascii: ">") else { return nil }
        return index + 2
    }

    /// `S name Eq ('"' value '"' | "'" value "'")`: the value, or nil (and the position unchanged) when the next
    /// thing is not that attribute.
    private mutating func attribute(_ name: String) -> [UInt8]? {
        let start = index
        guard skipSpace() > 0, consume(Array(name.utf8)) else {
            index = start
            return nil
        }
        skipSpace()
        guard consume([UInt8(ascii: "=")]) else {
            index = start
            return nil
        }
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
            index = start
            return nil
        }
        let quote = bytes[index]
        guard let close = bytes[(index + 1)...].firstIndex(of: quote) else {
            index = start
            return nil
        }
        let value = Array(bytes[(index + 1)..<close])
        index = close + 1
        return value
    }

    /// `UTF-8` or `UTF8`, ASCII letters in any case (XML 1.0 §4.3.3: encoding names are case-insensitive; libxml2
    /// takes both spellings as UTF-8). Compared byte by byte: no Unicode case mapping decides this.
    private func isUTF8(_ name: [UInt8]) -> Bool {
        let lowered = name.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
        return lowered == Array("utf-8".utf8) || lowered == Array("utf8".utf8)
    }

    /// `VersionNum ::= '1.' [0-9]+`.
    private func isVersion(_ value: [UInt8]) -> Bool {
        value.count > 2 && value.starts(with: Array("1.".utf8)) && value.dropFirst(2).allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    @discardableResult
    private mutating func skipSpace() -> Int {
        let start = index
        while index < bytes.count && NetworkSecurityConfigPreflight.isSpace(bytes[index]) { index += 1 }
        return index - start
    }

    private mutating func consume(_ pattern: [UInt8]) -> Bool {
        guard index + pattern.count <= bytes.count, bytes[index..<index + pattern.count].elementsEqual(pattern) else { return false }
        index += pattern.count
        return true
    }
}

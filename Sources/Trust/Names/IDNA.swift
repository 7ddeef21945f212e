#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Internationalised host names to their ASCII form: UTS #46 mapping (nontransitional) and NFC, then the
/// IDNA2008 validity rules per label (RFC 5891 §5.4: NFC, hyphens, no leading combining mark, every code
/// point PVALID or CONTEXTJ/CONTEXTO with its rule satisfied (RFC 5892 Appendix A), the Bidi Rule
/// (RFC 5893 §2) for a label with right-to-left characters), then Punycode (RFC 3492).
///
/// This is what curl (libidn2), Python's `idna.encode(name, uts46=True)` and browsers apply to a host a
/// user types, so that `ＥＸＡＭＰＬＥ．com`, `Example.com` and `example.com` are one host, `ﬁle.com` is
/// `file.com`, `faß.de` is `xn--fa-hia.de` (ß is kept, as UTS #46 now requires), and a name that could be
/// displayed misleadingly (a stray joiner, mixed-direction digits) is refused with the rule it breaks.
///
/// Labels that are ASCII after mapping keep the rules of ASCII host names (``PeerName``): letters,
/// digits, `-` and `_` — so that every spelling of a host, ASCII or not, ends in the same canonical name.
/// An `xn--` label must be valid: it must decode, pass the same checks, and encode back to itself.
/// Two choices follow Python's `idna` (the tests' oracle): the Bidi Rule is applied to each label that
/// holds a right-to-left character rather than to every label of such a name, and a code point the
/// Bidi_Class data does not know (newer than its Unicode version) is refused.
enum IDNA {
    /// The canonical ASCII form of a name that contains non-ASCII characters (one trailing dot already
    /// removed by the caller). `raw` is the name as given, for messages.
    static func canonicalName(_ name: String, raw: String) throws(PeerNameError) -> String {
        let tables = IDNATables.shared
        var mapped = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            let (status, replacement) = tables.mapping.lookup(scalar.value)
            switch status {
            case .valid, .deviation: mapped.append(scalar)
            case .mapped: mapped.append(contentsOf: replacement)
            case .ignored: continue
            case .disallowed:
                throw .invalidCharacter(raw, String(scalar))
            }
        }
        let normalised = String(mapped).canonicallyComposed
        var labels = normalised.unicodeScalars.split(separator: ".", omittingEmptySubsequences: false).map(Array.init)
        // A dot-like character at the very end (U+3002 …) maps to a trailing dot: one is allowed.
        if labels.count > 1, labels.last?.isEmpty == true, !raw.hasSuffix(".") { labels.removeLast() }
        var output: [String] = []
        for label in labels {
            guard !label.isEmpty else { throw .emptyLabel(raw) }
            if label.allSatisfy(\.isASCII) {
                output.append(try PeerName.canonicalASCIIName(String(String.UnicodeScalarView(label)), raw: raw))
                continue
            }
            // An A-label holds at least one octet per character plus `xn--`: longer labels are refused
            // before Punycode, whose cost grows with the square of a label's length.
            guard label.count <= 59 else { throw .labelTooLong(raw) }
            try check(label, raw: raw)
            guard let encoded = Punycode.encode(String(String.UnicodeScalarView(label))) else { throw .invalidInternationalisedName(raw) }
            let aLabel = "xn--" + encoded
            guard aLabel.utf8.count <= 63 else { throw .labelTooLong(raw) }
            output.append(aLabel)
        }
        let result = output.joined(separator: ".")
        guard result.utf8.count <= 253 else { throw .tooLong(raw) }
        return result
    }

    /// Checks an ASCII label that starts with `xn--` (lower case): valid Punycode, a valid U-label, and
    /// the canonical encoding of it (RFC 5891 §5.4).
    static func checkALabel(_ label: ArraySlice<UInt8>, raw: String) throws(PeerNameError) {
        let encoded = label.dropFirst(4)
        guard !encoded.isEmpty, encoded.last != UInt8(ascii: "-"), let decoded = Punycode.decode(encoded), !decoded.isEmpty else {
            throw .idnaRule(raw, "\"\(String(decoding: label, as: UTF8.self))\" is not valid Punycode")
        }
        guard !decoded.allSatisfy(\.isASCII) else {
            throw .idnaRule(raw, "\"\(String(decoding: label, as: UTF8.self))\" encodes only ASCII characters")
        }
        do {
            try check(decoded, raw: raw)
        } catch {
            guard case .invalidCharacter(_, let character) = error.detail else { throw error }
            throw .idnaRule(
                raw,
                "\"\(String(decoding: label, as: UTF8.self))\" decodes to \(character.unicodeScalars.map(name).joined(separator: " ")), which is not allowed in a host name"
            )
        }
        guard Punycode.encode(String(String.UnicodeScalarView(decoded))).map({ Array($0.utf8) == Array(encoded) }) == true else {
            throw .idnaRule(raw, "\"\(String(decoding: label, as: UTF8.self))\" is not the canonical encoding of its characters")
        }
    }

    /// The IDNA2008 validity rules for one U-label (RFC 5891 §5.4).
    static func check(_ label: [Unicode.Scalar], raw: String) throws(PeerNameError) {
        let text = String(String.UnicodeScalarView(label))
        guard Array(text.canonicallyComposed.unicodeScalars) == label else {
            throw .idnaRule(raw, "a label is not in Unicode normalisation form C")
        }
        if label.count >= 4 && label[2] == "-" && label[3] == "-" {
            throw .idnaRule(raw, "a label has hyphens in its third and fourth positions (RFC 5891 §4.2.3.1)")
        }
        if label.first == "-" || label.last == "-" { throw .idnaRule(raw, "a label starts or ends with a hyphen (RFC 5891 §4.2.3.1)") }
        if let first = label.first, isMark(first) {
            throw .idnaRule(raw, "a label starts with the combining mark \(name(first)) (RFC 5891 §4.2.3.2)")
        }
        let tables = IDNATables.shared
        for (position, scalar) in label.enumerated() {
            switch tables.validity.value(scalar.value) {
            case UInt8(ascii: "P"):
                continue
            case UInt8(ascii: "J"):
                guard joinerAllowed(label, at: position, tables: tables) else {
                    throw .idnaRule(raw, "\(name(scalar)) is allowed only after a virama, or (ZWNJ) between joining letters (RFC 5892 A.1, A.2)")
                }
            case UInt8(ascii: "O"):
                guard contextAllowed(label, at: position, tables: tables) else {
                    throw .idnaRule(raw, "\(name(scalar)) is not allowed where it stands (RFC 5892 A.3–A.9)")
                }
            default:
                throw .invalidCharacter(raw, String(scalar))
            }
        }
        if let why = bidiViolation(label, tables: tables) { throw .idnaRule(raw, why + " (the Bidi Rule, RFC 5893 §2)") }
    }

    static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    static func name(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + (scalar.properties.name.map { " " + $0 } ?? "")
    }

    /// RFC 5892 Appendix A.1 (ZERO WIDTH NON-JOINER) and A.2 (ZERO WIDTH JOINER).
    static func joinerAllowed(_ label: [Unicode.Scalar], at position: Int, tables: IDNATables.Tables) -> Bool {
        if position > 0 && label[position - 1].properties.canonicalCombiningClass == .virama { return true }
        guard label[position].value == 0x200C else { return false }
        // (Joining_Type:{L,D})(Joining_Type:T)* \u200C (Joining_Type:T)*(Joining_Type:{R,D})
        func joining(_ index: Int) -> UInt8? { tables.joining.value(label[index].value) }
        var before = position - 1
        while before >= 0, joining(before) == UInt8(ascii: "T") { before -= 1 }
        guard before >= 0, let left = joining(before), left == UInt8(ascii: "L") || left == UInt8(ascii: "D") else { return false }
        var after = position + 1
        while after < label.count, joining(after) == UInt8(ascii: "T") { after += 1 }
        guard after < label.count, let right = joining(after), right == UInt8(ascii: "R") || right == UInt8(ascii: "D") else { return false }
        return true
    }

    /// RFC 5892 Appendix A.3–A.9.
    static func contextAllowed(_ label: [Unicode.Scalar], at position: Int, tables: IDNATables.Tables) -> Bool {
        let value = label[position].value
        func script(_ scalar: Unicode.Scalar) -> UInt8? { tables.scripts.value(scalar.value) }
        switch value {
        case 0x00B7:  // MIDDLE DOT: between two l (Catalan l·l)
            return position > 0 && position < label.count - 1 && label[position - 1] == "l" && label[position + 1] == "l"
        case 0x0375:  // GREEK LOWER NUMERAL SIGN: before a Greek character
            return position < label.count - 1 && script(label[position + 1]) == UInt8(ascii: "G")
        case 0x05F3, 0x05F4:  // HEBREW PUNCTUATION GERESH/GERSHAYIM: after a Hebrew character
            return position > 0 && script(label[position - 1]) == UInt8(ascii: "H")
        case 0x30FB:  // KATAKANA MIDDLE DOT: with a Hiragana, Katakana or Han character in the label
            return label.contains { $0.value != 0x30FB && script($0) == UInt8(ascii: "J") }
        case 0x0660...0x0669:  // ARABIC-INDIC DIGITS: not mixed with extended ones
            return !label.contains { (0x06F0...0x06F9).contains($0.value) }
        case 0x06F0...0x06F9:  // EXTENDED ARABIC-INDIC DIGITS: not mixed with Arabic-Indic ones
            return !label.contains { (0x0660...0x0669).contains($0.value) }
        default:
            return false
        }
    }

    /// The first Bidi Rule a label with a right-to-left character breaks, or `nil`.
    static func bidiViolation(_ label: [Unicode.Scalar], tables: IDNATables.Tables) -> String? {
        // Classes as one letter (see IDNATables.bidiRanges); L where the table has none.
        let classes = label.map { tables.bidi.value($0.value) ?? UInt8(ascii: "L") }
        if let unknown = classes.firstIndex(of: UInt8(ascii: "?")) {
            return "the direction of \(name(label[unknown])) is not known to Unicode \(IDNATables.bidiUnicodeVersion)"
        }
        let rightToLeft: Set<UInt8> = [UInt8(ascii: "R"), UInt8(ascii: "A"), UInt8(ascii: "N")]
        guard classes.contains(where: rightToLeft.contains), let first = classes.first else { return nil }
        let isRTL: Bool
        switch first {
        case UInt8(ascii: "R"), UInt8(ascii: "A"): isRTL = true
        case UInt8(ascii: "L"): isRTL = false
        default: return "a label with right-to-left characters must start with a letter of either direction (rule 1)"
        }
        let allowedRTL = Set("RANESCTOBM".utf8)
        let allowedLTR = Set("LESCTOBM".utf8)
        var validEnding = false
        var numberType: UInt8?
        for value in classes {
            if isRTL {
                guard allowedRTL.contains(value) else { return "a right-to-left label holds a left-to-right character (rule 2)" }
                if "RAEN".utf8.contains(value) { validEnding = true } else if value != UInt8(ascii: "M") { validEnding = false }
                if value == UInt8(ascii: "N") || value == UInt8(ascii: "E") {
                    if let numberType, numberType != value { return "a right-to-left label mixes European and Arabic-Indic digits (rule 4)" }
                    numberType = value
                }
            } else {
                guard allowedLTR.contains(value) else { return "a left-to-right label holds a right-to-left character (rule 5)" }
                if value == UInt8(ascii: "L") || value == UInt8(ascii: "E") { validEnding = true } else if value != UInt8(ascii: "M") { validEnding = false }
            }
        }
        return validEnding ? nil : "a label ends with a character of the wrong direction (rule \(isRTL ? 3 : 6))"
    }
}

extension String {
    /// The text in Unicode Normalization Form C (UAX #15 §1.2), as UTS #46 §4 step 3 and RFC 5891 §5.4 ask.
    ///
    /// By the Swift standard library's own normalizer (the one `String` comparison uses, with the Unicode
    /// data the standard library ships), not Foundation's `precomposedStringWithCanonicalMapping`: that is
    /// in full Foundation only, backed by ICU on Linux, which would link ICU's data into every binary that
    /// checks a host name. `_nfcCodeUnits` is public in the standard library for this use (its tests and
    /// FoundationEssentials' URL encoding call it).
    fileprivate var canonicallyComposed: String {
        String(decoding: _nfcCodeUnits, as: UTF8.self)
    }
}

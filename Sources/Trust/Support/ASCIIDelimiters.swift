/// Finding and splitting at ASCII delimiters (`:`, `@`, `,`, `"`…) by UTF-8 byte, not by `Character`.
///
/// Swift compares `Character`s — extended grapheme clusters (UAX #29) — so `"a:\u{301}b".contains(":")`
/// is false: a colon followed by a combining mark is one character, `:́`, which is not `:`. Foundation's
/// `range(of:)` and `replacingOccurrences(of:with:)` on Linux do the same unless asked for `.literal`. A
/// parser or a redactor that looks for a delimiter that way can be walked around by whoever writes the
/// text: a quote that is not escaped in a quoted-string (RFC 9110 §5.6.4), a colon in a Basic user-id
/// (RFC 7617 §2), an `@` that hides a URL's user-info from redaction (RFC 3986 §3.2.1). The HTTP grammar
/// is defined over octets (RFC 9110 §5.6), so these helpers look at the bytes. Every index they return
/// is on a Unicode scalar boundary (an ASCII byte is a whole scalar), so it can slice the string.
extension StringProtocol {
    /// Whether the text holds the ASCII byte `byte` anywhere, even where a combining mark follows it.
    package func containsASCII(_ byte: UInt8) -> Bool {
        utf8.contains(byte)
    }

    /// The first position of the ASCII byte `byte`.
    package func firstIndex(ofASCII byte: UInt8) -> Index? {
        utf8.firstIndex(of: byte)
    }

    /// The text before and after the first ASCII byte `byte` (the byte itself in neither), or nil.
    package func splitOnce(atASCII byte: UInt8) -> (before: SubSequence, after: SubSequence)? {
        guard let index = utf8.firstIndex(of: byte) else { return nil }
        return (self[..<index], self[utf8.index(after: index)...])
    }

    /// The pieces between the ASCII bytes `byte`, empty ones kept (`"a,,b"` gives `a`, ``, `b`).
    package func split(atASCII byte: UInt8) -> [SubSequence] {
        var pieces: [SubSequence] = []
        var start = startIndex
        var index = utf8.startIndex
        while index < utf8.endIndex {
            if utf8[index] == byte {
                pieces.append(self[start..<index])
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        pieces.append(self[start...])
        return pieces
    }
}

extension StringProtocol where UTF8View: BidirectionalCollection {
    /// The last position of the ASCII byte `byte`.
    package func lastIndex(ofASCII byte: UInt8) -> Index? {
        utf8.lastIndex(of: byte)
    }
}

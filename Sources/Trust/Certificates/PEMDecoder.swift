/// Finds the `CERTIFICATE` blocks of PEM text (RFC 7468) and decodes their Base64, working on
/// bytes only.
///
/// Hand-written rather than Foundation's `Data(base64Encoded:)` on a filtered `String`: loading
/// a system bundle of ~150 roots is on every process's start-up path, and character-by-character
/// string work (grapheme breaking, `isWhitespace`) cost more than the decoding itself. Strictness
/// is RFC 7468's "strict" form for the body: Base64 characters and whitespace only, padding only
/// at the end, a length that is a multiple of four; anything between blocks is ignored.
enum PEMDecoder {
    /// Why a block could not be decoded; `block` counts `BEGIN CERTIFICATE` lines from 1.
    enum Failure: Error, Equatable {
        case unterminated(block: Int)
        case invalidBase64(block: Int)
    }

    private static let begin = Array("-----BEGIN CERTIFICATE-----".utf8)
    private static let end = Array("-----END CERTIFICATE-----".utf8)

    /// Whether `bytes` hold a PEM `BEGIN` line of any kind (to tell PEM from other input).
    static func containsBeginLine(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        find(Array("-----BEGIN".utf8), in: bytes, from: 0) != nil
    }

    /// The DER of every `CERTIFICATE` block, in order; the first bad block fails the whole input.
    static func certificateDERs(in bytes: UnsafeBufferPointer<UInt8>) throws(Failure) -> [[UInt8]] {
        var result: [[UInt8]] = []
        for (index, block) in blocks(in: bytes).enumerated() {
            guard let der = block else { throw .invalidBase64(block: index + 1) }
            result.append(der)
        }
        if let unterminated = unterminatedBlock(in: bytes) { throw .unterminated(block: unterminated) }
        return result
    }

    /// Every terminated `CERTIFICATE` block's DER, or `nil` for one whose Base64 is invalid; an
    /// unterminated last block is left out. For bundles, where one bad block must not cost the rest.
    static func blocks(in bytes: UnsafeBufferPointer<UInt8>) -> [[UInt8]?] {
        var result: [[UInt8]?] = []
        var position = 0
        while let start = find(begin, in: bytes, from: position) {
            let bodyStart = start + begin.count
            guard let stop = find(end, in: bytes, from: bodyStart) else { break }
            result.append(decodeBase64(bytes, from: bodyStart, to: stop))
            position = stop + end.count
        }
        return result
    }

    /// The Base64 body (between the `BEGIN` and `END` lines) of every terminated `CERTIFICATE`
    /// block, not decoded.
    static func bodies(in bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var position = 0
        while let start = find(begin, in: bytes, from: position) {
            let bodyStart = start + begin.count
            guard let stop = find(end, in: bytes, from: bodyStart) else { break }
            result.append(bodyStart..<stop)
            position = stop + end.count
        }
        return result
    }

    /// The index in `bytes` just after the first `characters` non-whitespace bytes from `from`
    /// (`to` when there are fewer): where to stop decoding a prefix of a Base64 body.
    static func prefixEnd(_ bytes: UnsafeBufferPointer<UInt8>, from: Int, to: Int, characters: Int) -> Int {
        var counted = 0
        var index = from
        while index < to && counted < characters {
            let byte = bytes[index]
            if byte != 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D { counted += 1 }
            index += 1
        }
        return index
    }

    /// A PEM block of any type: its label (`PUBLIC KEY`, `CERTIFICATE REQUEST`…) and its DER, or
    /// `nil` for a body that is not valid Base64.
    struct Document {
        var label: String
        var der: [UInt8]?
    }

    /// Every PEM block, whatever its label, in order.
    static func documents(in bytes: UnsafeBufferPointer<UInt8>) throws(Failure) -> [Document] {
        let beginPrefix = Array("-----BEGIN ".utf8)
        let dashes = Array("-----".utf8)
        var result: [Document] = []
        var position = 0
        while let start = find(beginPrefix, in: bytes, from: position) {
            let labelStart = start + beginPrefix.count
            guard let labelEnd = find(dashes, in: bytes, from: labelStart), labelEnd - labelStart <= 64 else {
                throw .unterminated(block: result.count + 1)
            }
            let label = String(decoding: UnsafeBufferPointer(rebasing: bytes[labelStart..<labelEnd]), as: UTF8.self)
            let endLine = Array("-----END \(label)-----".utf8)
            let bodyStart = labelEnd + dashes.count
            guard let stop = find(endLine, in: bytes, from: bodyStart) else { throw .unterminated(block: result.count + 1) }
            result.append(Document(label: label, der: decodeBase64(bytes, from: bodyStart, to: stop)))
            position = stop + endLine.count
        }
        return result
    }

    /// The number of the first block with no `END` line, if any.
    private static func unterminatedBlock(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var position = 0
        var block = 0
        while let start = find(begin, in: bytes, from: position) {
            block += 1
            guard let stop = find(end, in: bytes, from: start + begin.count) else { return block }
            position = stop + end.count
        }
        return nil
    }

    /// The first index of `needle` in `bytes` at or after `from`.
    static func find(_ needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        guard let first = needle.first, bytes.count >= needle.count else { return nil }
        var index = from
        let last = bytes.count - needle.count
        while index <= last {
            if bytes[index] == first {
                var matched = 1
                while matched < needle.count && bytes[index + matched] == needle[matched] { matched += 1 }
                if matched == needle.count { return index }
            }
            index += 1
        }
        return nil
    }

    /// The value of each Base64 character (RFC 4648 §4); 0xFF for others, 0xFE for whitespace.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(character)] = UInt8(index)
        }
        for space in [0x20, 0x09, 0x0A, 0x0D] { table[space] = 0xFE }
        return table
    }()

    /// Decodes `bytes[from..<to]`, skipping whitespace; `nil` on any other non-Base64 byte,
    /// misplaced padding or a length that is not a multiple of four.
    static func decodeBase64(_ bytes: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> [UInt8]? {
        // The table is read through one buffer pointer (not the lazily initialised global per byte).
        values.withUnsafeBufferPointer { table in decodeBase64(bytes, from: from, to: to, table: table) }
    }

    private static func decodeBase64(_ bytes: UnsafeBufferPointer<UInt8>, from: Int, to: Int, table: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        // Every 4 characters give at most 3 bytes, whitespace none: the output is written in place, without
        // an append (and its capacity check) per byte.
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: max(0, to - from) / 4 * 3) { buffer, count in
            var written = 0
            var quad: UInt32 = 0
            var filled = 0
            var padding = 0
            var ended = false
            var index = from
            while index < to {
                // Four Base64 characters in a row, as in every quad of a PEM line: 0xFE (whitespace) and 0xFF
                // (anything else, `=` included) have the high bits set, so one test covers the four.
                if filled == 0, index + 4 <= to {
                    let (a, b, c, d) = (table[Int(bytes[index])], table[Int(bytes[index + 1])], table[Int(bytes[index + 2])], table[Int(bytes[index + 3])])
                    if a | b | c | d < 64 {
                        let value = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                        buffer[written] = UInt8(truncatingIfNeeded: value >> 16)
                        buffer[written + 1] = UInt8(truncatingIfNeeded: value >> 8)
                        buffer[written + 2] = UInt8(truncatingIfNeeded: value)
                        written += 3
                        index += 4
                        continue
                    }
                }
                let byte = bytes[index]
                let value = table[Int(byte)]
                index += 1
                if value == 0xFE { continue }
                if byte == UInt8(ascii: "=") {
                    // Padding may end the last quad only: "xx==" or "xxx=".
                    guard filled >= 2 else {
                        valid = false
                        break
                    }
                    padding += 1
                    quad <<= 6
                    filled += 1
                } else {
                    guard value != 0xFF, padding == 0 else {
                        valid = false
                        break
                    }
                    quad = quad << 6 | UInt32(value)
                    filled += 1
                }
                if filled == 4 {
                    buffer[written] = UInt8(truncatingIfNeeded: quad >> 16)
                    written += 1
                    if padding < 2 {
                        buffer[written] = UInt8(truncatingIfNeeded: quad >> 8)
                        written += 1
                    }
                    if padding < 1 {
                        buffer[written] = UInt8(truncatingIfNeeded: quad)
                        written += 1
                    }
                    if padding > 0 {
                        // Nothing may follow the padded quad but whitespace.
                        for rest in index..<to where table[Int(bytes[rest])] != 0xFE { valid = false }
                        ended = true
                        break
                    }
                    quad = 0
                    filled = 0
                }
            }
            // A quad left incomplete ("QUJ", "QQ=") is not Base64.
            if !ended && filled != 0 { valid = false }
            count = written
        }
        return valid ? output : nil
    }
}

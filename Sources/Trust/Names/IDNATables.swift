/// The Unicode data behind `IDNA`, read from the generated blobs in `EmbeddedIDNATables.swift`
/// (Scripts/generate-idna-tables.py) once, on the first non-ASCII host name of the process.
///
/// The blobs are lines of hexadecimal fields; reading them is a single pass over about 200 KB of
/// read-only data into sorted arrays searched by bisection. An all-ASCII name never touches them.
package enum IDNATables {
    /// A UTS #46 status (§5): what happens to a code point before validation.
    enum Status: UInt8 {
        case valid = 0x56  // V
        case mapped = 0x4D  // M
        case deviation = 0x44  // D: kept under nontransitional processing (ß, ς, ZWJ, ZWNJ)
        case ignored = 0x49  // I
        case disallowed = 0x58  // X
    }

    /// Sorted, non-overlapping ranges with a one-letter value each.
    struct RangeTable: Sendable {
        var starts: [UInt32] = []
        var ends: [UInt32] = []
        var values: [UInt8] = []

        init(_ blob: StaticString) {
            IDNATables.lines(blob) { fields in
                guard fields.count == 3, let start = Self.hex(fields[0]), let end = Self.hex(fields[1]), let value = fields[2].first else { return }
                starts.append(start)
                ends.append(end)
                values.append(value)
            }
        }

        /// The value of the range holding `scalar`, or `nil`.
        func value(_ scalar: UInt32) -> UInt8? {
            var low = 0
            var high = starts.count
            while low < high {
                let middle = (low + high) / 2
                if starts[middle] <= scalar { low = middle + 1 } else { high = middle }
            }
            guard low > 0, ends[low - 1] >= scalar else { return nil }
            return values[low - 1]
        }

        static func hex(_ field: ArraySlice<UInt8>) -> UInt32? {
            guard !field.isEmpty, field.count <= 6 else { return nil }
            var value: UInt32 = 0
            for byte in field {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
    }

    /// The UTS #46 mapping table: status and replacement per row.
    struct MappingTable: Sendable {
        var starts: [UInt32] = []
        var statuses: [Status] = []
        /// Where each row's replacement starts in `pool`, and its length (0 without one).
        var replacementStarts: [Int32] = []
        var replacementCounts: [UInt8] = []
        var pool: [Unicode.Scalar] = []

        init(_ blob: StaticString) {
            IDNATables.lines(blob) { fields in
                guard fields.count >= 2, let start = RangeTable.hex(fields[0]), let letter = fields[1].first,
                    let status = Status(rawValue: letter)
                else { return }
                starts.append(start)
                statuses.append(status)
                replacementStarts.append(Int32(pool.count))
                var count = 0
                for field in fields.dropFirst(2) {
                    guard let value = RangeTable.hex(field), let scalar = Unicode.Scalar(value) else { continue }
                    pool.append(scalar)
                    count += 1
                }
                replacementCounts.append(UInt8(count))
            }
        }

        /// The status of `scalar` and, when mapped, its replacement.
        func lookup(_ scalar: UInt32) -> (Status, ArraySlice<Unicode.Scalar>) {
            var low = 0
            var high = starts.count
            while low < high {
                let middle = (low + high) / 2
                if starts[middle] <= scalar { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { return (.disallowed, []) }
            let row = low - 1
            let start = Int(replacementStarts[row])
            return (statuses[row], pool[start..<start + Int(replacementCounts[row])])
        }
    }

    /// Everything, read on first use (a `static let` is initialised once, thread-safely).
    struct Tables: Sendable {
        let mapping = MappingTable(IDNATables.mappingRows)
        let validity = RangeTable(IDNATables.validityRanges)
        let bidi = RangeTable(IDNATables.bidiRanges)
        let joining = RangeTable(IDNATables.joiningRanges)
        let scripts = RangeTable(IDNATables.scriptRanges)
    }

    static let shared = Tables()

    /// Calls `body` with the space-separated fields of each non-empty line of `blob`.
    static func lines(_ blob: StaticString, _ body: ([ArraySlice<UInt8>]) -> Void) {
        blob.withUTF8Buffer { buffer in
            let bytes = ArraySlice(buffer)
            var lineStart = bytes.startIndex
            while lineStart < bytes.endIndex {
                let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
                let fields = bytes[lineStart..<lineEnd].split(separator: UInt8(ascii: " "))
                if !fields.isEmpty { body(fields) }
                lineStart = lineEnd + 1
            }
        }
    }
}

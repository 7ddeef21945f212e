/// A JSON document as written (RFC 8259), for configuration files that must be checked strictly:
/// object members keep their order and duplicates are detected, `true`/`false` are never numbers,
/// numbers keep their text. Foundation's `JSONSerialization` blurs booleans and numbers and drops
/// duplicate keys silently — both ways for a configuration to mean something other than it says.
package indirect enum JSONValue: Sendable, Hashable {
    case object([Member])
    case array([JSONValue])
    case string(String)
    case number(String)
    case bool(Bool)
    case null

    /// One member of an object: a key and its value.
    package struct Member: Sendable, Hashable {
        /// The member's name.
        package var key: String
        /// The member's value.
        package var value: JSONValue

        /// Creates a member.
        package init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// Why a text is not valid JSON, with the position where parsing stopped.
    package struct SyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The line, counted from 1.
        package var line: Int
        /// The column, counted from 1.
        package var column: Int
        /// What is wrong.
        package var message: String
        /// Human-readable form, with line and column.
        package var description: String { "line \(line), column \(column): \(message)" }
    }

    /// The deepest nesting of arrays and objects `parse(_:)` accepts.
    package static let maximumDepth = 64

    /// Parses a whole document (bytes after the value other than whitespace are an error).
    package static func parse(_ text: String) throws(SyntaxError) -> JSONValue {
        var parser = Parser(bytes: Array(text.utf8))
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.error("unexpected text after the document") }
        return value
    }

    /// What a value is, for messages ("a string", "an object"…).
    package var kindName: String {
        switch self {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }

    struct Parser {
        let bytes: [UInt8]
        var index = 0

        func error(_ message: String) -> SyntaxError {
            var line = 1
            var column = 1
            for byte in bytes.prefix(index) {
                if byte == 0x0A {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
            }
            return SyntaxError(line: line, column: column, message: message)
        }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func literal(_ word: String) -> Bool {
            let utf8 = Array(word.utf8)
            guard bytes.count - index >= utf8.count, Array(bytes[index..<(index + utf8.count)]) == utf8 else { return false }
            index += utf8.count
            return true
        }

        mutating func value(depth: Int) throws(SyntaxError) -> JSONValue {
            guard depth < JSONValue.maximumDepth else { throw error("nested more than \(JSONValue.maximumDepth) levels") }
            guard index < bytes.count else { throw error("unexpected end of the document") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): if literal("true") { return .bool(true) }
            case UInt8(ascii: "f"): if literal("false") { return .bool(false) }
            case UInt8(ascii: "n"): if literal("null") { return .null }
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: break
            }
            throw error("expected a value")
        }

        mutating func object(depth: Int) throws(SyntaxError) -> JSONValue {
            index += 1
            var members: [Member] = []
            var keys = Set<String>()
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object([])
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
                let keyStart = index
                let key = try string()
                guard keys.insert(key).inserted else {
                    index = keyStart
                    throw error("the member \"\(key)\" appears twice in one object")
                }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after \"\(key)\"") }
                index += 1
                skipWhitespace()
                members.append(Member(key: key, value: try value(depth: depth + 1)))
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end inside an object") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard bytes[index] == UInt8(ascii: "}") else { throw error("expected ',' or '}'") }
                index += 1
                return .object(members)
            }
        }

        mutating func array(depth: Int) throws(SyntaxError) -> JSONValue {
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array([])
            }
            while true {
                skipWhitespace()
                elements.append(try value(depth: depth + 1))
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end inside an array") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard bytes[index] == UInt8(ascii: "]") else { throw error("expected ',' or ']'") }
                index += 1
                return .array(elements)
            }
        }

        mutating func string() throws(SyntaxError) -> String {
            index += 1
            var out: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    guard let text = StrictUTF8.string(out) else { throw error("a string is not valid UTF-8") }
                    return text
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { break }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""): out.append(0x22)
                    case UInt8(ascii: "\\"): out.append(0x5C)
                    case UInt8(ascii: "/"): out.append(0x2F)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard literal("\\u") else { throw error("a lone surrogate in a string") }
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw error("a lone surrogate in a string") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw error("a lone surrogate in a string") }
                        out.append(contentsOf: Array(String(Character(unicode)).utf8))
                    default:
                        throw error("unknown escape in a string")
                    }
                default:
                    guard byte >= 0x20 else { throw error("a control character inside a string") }
                    out.append(byte)
                }
            }
            throw error("unterminated string")
        }

        mutating func hex4() throws(SyntaxError) -> UInt32 {
            guard bytes.count - index >= 4 else { throw error("short \\u escape") }
            var value: UInt32 = 0
            for byte in bytes[index..<(index + 4)] {
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - 48)
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - 87)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - 55)
                default: throw error("bad \\u escape")
                }
                value = value << 4 | digit
            }
            index += 4
            return value
        }

        mutating func number() throws(SyntaxError) -> String {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            func digits() -> Int {
                let from = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                return index - from
            }
            let integerStart = index
            let integerDigits = digits()
            guard integerDigits > 0 else { throw error("a number without digits") }
            if integerDigits > 1 && bytes[integerStart] == UInt8(ascii: "0") { throw error("a number with a leading zero") }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw error("a number without digits after '.'") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw error("a number without exponent digits") }
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
    }
}

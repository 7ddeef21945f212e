#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Any property-list value (Apple's property list format: dictionary, array, string, integer, real, boolean, date,
/// data), decoded by `PropertyListDecoder` without knowing the shape beforehand, as `PropertyListSerialization` (full
/// Foundation only) returned it.
enum PropertyListValue: Decodable {
    case dictionary([String: PropertyListValue])
    case array([PropertyListValue])
    case string(String)
    case boolean(Bool)
    case integer(Int)
    case real(Double)
    case date(Date)
    case data(Data)

    init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: AnyKey.self) {
            var dictionary: [String: PropertyListValue] = [:]
            for key in container.allKeys { dictionary[key.stringValue] = try container.decode(PropertyListValue.self, forKey: key) }
            self = .dictionary(dictionary)
            return
        }
        if var container = try? decoder.unkeyedContainer() {
            var elements: [PropertyListValue] = []
            while !container.isAtEnd { elements.append(try container.decode(PropertyListValue.self)) }
            self = .array(elements)
            return
        }
        let value = try decoder.singleValueContainer()
        // The order matters: an integer is tried before a real, and a string before a date or data, so that a
        // base64 pin stays the string it is whatever a decoder would make of it.
        if let flag = try? value.decode(Bool.self) {
            self = .boolean(flag)
        } else if let number = try? value.decode(Int.self) {
            self = .integer(number)
        } else if let number = try? value.decode(Double.self) {
            self = .real(number)
        } else if let text = try? value.decode(String.self) {
            self = .string(text)
        } else if let date = try? value.decode(Date.self) {
            self = .date(date)
        } else {
            self = .data(try value.decode(Data.self))
        }
    }

    /// As plain Swift values: `[String: Any]`, `[Any]`, `String`, `Bool`, `Int`, `Double`, `Date`, `Data`.
    var plain: Any {
        switch self {
        case .dictionary(let dictionary): dictionary.mapValues(\.plain)
        case .array(let elements): elements.map(\.plain)
        case .string(let text): text
        case .boolean(let flag): flag
        case .integer(let number): number
        case .real(let number): number
        case .date(let date): date
        case .data(let bytes): bytes
        }
    }

    /// A dictionary's keys, whatever they are.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

/// RFC 3492 Punycode, used to turn an internationalised label into its ASCII-compatible form
/// (`xn--…`) and to read one back when an A-label is checked.
enum Punycode {
    private static let base = 36
    private static let tMin = 1
    private static let tMax = 26
    private static let skew = 38
    private static let damp = 700
    private static let initialBias = 72
    private static let initialN = 128

    private static func digit(_ value: Int) -> Character {
        let scalar = value < 26 ? UInt8(value) + UInt8(ascii: "a") : UInt8(value - 26) + UInt8(ascii: "0")
        return Character(Unicode.Scalar(scalar))
    }

    private static func adapt(_ delta: Int, _ numPoints: Int, _ firstTime: Bool) -> Int {
        var delta = firstTime ? delta / damp : delta / 2
        delta += delta / numPoints
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }

    /// Encodes one label; `nil` on arithmetic overflow (absurdly long labels).
    static func encode(_ label: String) -> String? {
        let input = label.unicodeScalars.map { Int($0.value) }
        var output = String(label.unicodeScalars.filter { $0.isASCII }.map(Character.init))
        let basicCount = output.count
        var handled = basicCount
        if basicCount > 0 { output.append("-") }
        var n = initialN
        var delta = 0
        var bias = initialBias
        while handled < input.count {
            guard let m = input.filter({ $0 >= n }).min() else { return nil }
            let (product, overflow) = (m - n).multipliedReportingOverflow(by: handled + 1)
            guard !overflow, product <= Int(Int32.max) - delta else { return nil }
            delta += product
            n = m
            for c in input {
                if c < n {
                    delta += 1
                    guard delta <= Int(Int32.max) else { return nil }
                }
                if c == n {
                    var q = delta
                    var k = base
                    while true {
                        let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                        if q < t { break }
                        output.append(digit(t + (q - t) % (base - t)))
                        q = (q - t) / (base - t)
                        k += base
                    }
                    output.append(digit(q))
                    bias = adapt(delta, handled + 1, handled == basicCount)
                    delta = 0
                    handled += 1
                }
            }
            delta += 1
            n += 1
        }
        return output
    }

    /// Decodes the part of an A-label after `xn--` (RFC 3492 §6.2); `nil` when it is not valid Punycode
    /// (a non-basic or unknown digit, a truncated number, overflow, a code point that is not a scalar).
    /// Upper-case digits are read as lower-case, as the RFC allows.
    static func decode(_ input: some Collection<UInt8>) -> [Unicode.Scalar]? {
        let bytes = Array(input)
        var output: [UInt32] = []
        var position = 0
        if let delimiter = bytes.lastIndex(of: UInt8(ascii: "-")), delimiter > 0 {
            for byte in bytes[..<delimiter] {
                guard byte < 0x80 else { return nil }
                output.append(UInt32(byte))
            }
            position = delimiter + 1
        }
        var n = initialN
        var i = 0
        var bias = initialBias
        let limit = Int(Int32.max)
        while position < bytes.count {
            let oldI = i
            var weight = 1
            var k = base
            while true {
                guard position < bytes.count, let digit = digitValue(bytes[position]) else { return nil }
                position += 1
                let (product, overflow) = digit.multipliedReportingOverflow(by: weight)
                guard !overflow, product <= limit - i else { return nil }
                i += product
                let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                if digit < t { break }
                let (nextWeight, weightOverflow) = weight.multipliedReportingOverflow(by: base - t)
                guard !weightOverflow, nextWeight <= limit else { return nil }
                weight = nextWeight
                k += base
            }
            let count = output.count + 1
            bias = adapt(i - oldI, count, oldI == 0)
            guard i / count <= limit - n else { return nil }
            n += i / count
            i %= count
            guard n <= 0x10FFFF, Unicode.Scalar(UInt32(n)) != nil else { return nil }
            output.insert(UInt32(n), at: i)
            i += 1
        }
        return output.compactMap(Unicode.Scalar.init)
    }

    private static func digitValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return Int(byte - UInt8(ascii: "a"))
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return Int(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte - UInt8(ascii: "0")) + 26
        default: return nil
        }
    }
}

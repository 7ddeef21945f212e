#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// RFC 3339 timestamps with an offset and optional fractional seconds
/// (`2024-03-01T00:00:00.999+00:00`), parsed without losing the fraction.
package enum RFC3339 {
    /// Parses a timestamp; `nil` when it is not RFC 3339 with an explicit offset.
    package static func parse(_ text: String) -> Date? {
        // date-time = full-date ("T" / "t" / " ") partial-time time-offset (RFC 3339 §5.6, and the space §5.6 allows),
        // read byte by byte: ASCII digits only.
        let bytes = Array(text.utf8)
        var at = 0
        func number(_ digits: Int) -> Int? {
            guard at + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[at..<at + digits] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            at += digits
            return value
        }
        func expect(_ allowed: String) -> Bool {
            guard at < bytes.count, allowed.utf8.contains(bytes[at]) else { return false }
            at += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2), expect("Tt "),
            let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2)
        else { return nil }
        var fraction = 0.0
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            let start = at
            at += 1
            while at < bytes.count, (0x30...0x39).contains(bytes[at]) { at += 1 }
            guard at > start + 1, let value = Double("0" + String(decoding: bytes[start..<at], as: UTF8.self)) else { return nil }
            fraction = value
        }
        var offsetSeconds = 0
        if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") {
            let sign = bytes[at] == UInt8(ascii: "-") ? -1 : 1
            at += 1
            guard let hours = number(2), expect(":"), let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offsetSeconds = sign * (hours * 3600 + minutes * 60)
        } else {
            guard expect("Zz") else { return nil }
        }
        guard at == bytes.count, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        // Proleptic Gregorian, as the formatting below (CivilDate): the same text parses to the same moment
        // before 1582-10-15 too.
        let civil = CivilDate(year: Int64(year), month: Int64(month), day: Int64(day))
        guard civil.isValid else { return nil }
        return civil.date(secondsIntoDay: Double(hour * 3600 + minute * 60 + second - offsetSeconds) + fraction)
    }

    /// Formats a date as RFC 3339 in UTC with milliseconds (`2025-01-01T00:00:00.000Z`), rounded to the nearest
    /// millisecond (ties to the later), as `ISO8601DateFormatter` with fractional seconds does. Dates are proleptic Gregorian, as in
    /// ISO 8601 and X.509, also before 1582-10-15 (where `ISO8601DateFormatter` switches to the Julian calendar).
    ///
    /// Written out rather than through a formatter: `ISO8601DateFormatter` (swift-corelibs-foundation) builds a
    /// CoreFoundation/ICU formatter on every call, and `Date.ISO8601FormatStyle` truncates the fraction, so a
    /// date that is a whole number of milliseconds but not exactly representable in binary
    /// (`…59.999`) prints one millisecond early (`…59.998`).
    package static func string(_ date: Date) -> String {
        // Half a millisecond up, then down to the millisecond: the rounding of CoreFoundation's date formatter
        // (`ms + 0.5` handed to ICU, which floors), so ties, before 1970 too, round towards the later time.
        let milliseconds = (date.timeIntervalSince1970 * 1000 + 0.5).rounded(.down)
        // ±2^53 ms: the whole numbers a Double holds exactly (about ±285,000 years); beyond that, the ends.
        let limit = 9_007_199_254_740_992.0
        let total = Int64(Swift.min(Swift.max(milliseconds.isNaN ? 0 : milliseconds, -limit), limit))
        let millisecondsPerDay: Int64 = 86_400_000
        let days = total >= 0 ? total / millisecondsPerDay : -((-total - 1) / millisecondsPerDay) - 1
        let inDay = total - days * millisecondsPerDay
        let hour = inDay / 3_600_000
        let minute = inDay / 60_000 % 60
        let second = inDay / 1000 % 60
        let millisecond = inDay % 1000
        let pad = CivilDate.pad
        return "\(CivilDate(daysSince1970: days).text)T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(millisecond, 3))Z"
    }
}

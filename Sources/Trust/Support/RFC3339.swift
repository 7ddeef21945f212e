import Foundation

/// RFC 3339 timestamps with an offset and optional fractional seconds
/// (`2024-03-01T00:00:00.999+00:00`), parsed without losing the fraction.
package enum RFC3339 {
    /// Parses a timestamp; `nil` when it is not RFC 3339 with an explicit offset.
    package static func parse(_ text: String) -> Date? {
        let pattern = #"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"#
        guard let regex = try? NSRegularExpression(pattern: pattern),
            let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text))
        else { return nil }
        func group(_ i: Int) -> String? {
            guard let range = Range(match.range(at: i), in: text) else { return nil }
            return String(text[range])
        }
        guard let year = group(1).flatMap(Int.init), let month = group(2).flatMap(Int.init), let day = group(3).flatMap(Int.init),
            let hour = group(4).flatMap(Int.init), let minute = group(5).flatMap(Int.init), let second = group(6).flatMap(Int.init),
            let zone = group(8), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var offsetSeconds = 0
        if zone != "Z" && zone != "z" {
            let sign = zone.hasPrefix("-") ? -1 : 1
            let parts = zone.dropFirst().split(separator: ":").compactMap { Int($0) }
            guard parts.count == 2, parts[0] < 24, parts[1] < 60 else { return nil }
            offsetSeconds = sign * (parts[0] * 3600 + parts[1] * 60)
        }
        var calendar = Calendar(identifier: .gregorian)
        guard let utc = TimeZone(identifier: "UTC") else { return nil }
        calendar.timeZone = utc
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let whole = calendar.date(from: components), calendar.component(.day, from: whole) == day else { return nil }
        let fraction = group(7).flatMap { Double("0" + $0) } ?? 0
        return whole.addingTimeInterval(fraction - Double(offsetSeconds))
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
        let (year, month, day) = civil(daysSince1970: days)
        let hour = inDay / 3_600_000, minute = inDay / 60_000 % 60, second = inDay / 1000 % 60, millisecond = inDay % 1000
        let yearText = year < 0 ? "-" + pad(-year, 4) : pad(year, 4)
        return "\(yearText)-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(millisecond, 3))Z"
    }

    /// Year, month and day in the proleptic Gregorian calendar of a count of days since 1970-01-01: the inverse
    /// of the days-from-civil count, by 400-year eras of 146,097 days (each era starts on 1 March, so that the
    /// leap day ends a year).
    static func civil(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468  // days from 0000-03-01 to 1970-01-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097  // 0...146096
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365  // 0...399
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // 0...365, from 1 March
        let shiftedMonth = (5 * dayOfYear + 2) / 153  // 0...11, March first
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}

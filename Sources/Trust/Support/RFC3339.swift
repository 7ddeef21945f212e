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
        // Proleptic Gregorian, as the formatting below (CivilDate): the same text parses to the same moment
        // before 1582-10-15 too.
        let civil = CivilDate(year: Int64(year), month: Int64(month), day: Int64(day))
        guard civil.isValid else { return nil }
        let fraction = group(7).flatMap { Double("0" + $0) } ?? 0
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

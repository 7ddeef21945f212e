#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A day of the proleptic Gregorian calendar (year 0 is 1 BC, as in ISO 8601) and its count of days since
/// 1970-01-01, both ways, by Howard Hinnant's `days_from_civil` / `civil_from_days`: 400-year eras of 146,097
/// days, each starting on 1 March so that the leap day ends a year.
///
/// Written out rather than through `Calendar(identifier: .gregorian)`: Foundation's Gregorian calendar switches
/// to the Julian one before 1582-10-15, while ISO 8601 (which RFC 3339 profiles) and X.509 times count
/// proleptic Gregorian days. Parsing and printing through the same arithmetic makes every date round-trip.
package struct CivilDate: Equatable, Sendable {
    package var year: Int64
    package var month: Int64  // 1...12
    package var day: Int64  // 1...31

    package init(year: Int64, month: Int64, day: Int64) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The day `days` days after 1970-01-01 (before it when negative).
    package init(daysSince1970 days: Int64) {
        let shifted = days + 719_468  // days from 0000-03-01 to 1970-01-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097  // 0...146096
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365  // 0...399
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // 0...365, from 1 March
        let shiftedMonth = (5 * dayOfYear + 2) / 153  // 0...11, March first
        day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// The day of a moment, in UTC.
    package init(_ date: Date) {
        self.init(daysSince1970: Int64((date.timeIntervalSince1970 / 86_400).rounded(.down)))
    }

    /// Whether the day exists: month 1...12 and a day within that month (29 February in leap years only).
    package var isValid: Bool {
        guard (1...12).contains(month), day >= 1 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths: [Int64] = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= lengths[Int(month - 1)]
    }

    /// Days from 1970-01-01 to this day (negative before it). Meaningful for valid days.
    package var daysSince1970: Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400  // 0...399
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1  // 0...365, from 1 March
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear  // 0...146096
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The moment this day starts, plus `secondsIntoDay` (which may exceed a day: a leap second rolls over).
    package func date(secondsIntoDay: Double = 0) -> Date {
        Date(timeIntervalSince1970: Double(daysSince1970) * 86_400 + secondsIntoDay)
    }

    /// `YYYY-MM-DD` (a leading `-` before year 0).
    package var text: String {
        let yearText = year < 0 ? "-" + Self.pad(-year, 4) : Self.pad(year, 4)
        return "\(yearText)-\(Self.pad(month, 2))-\(Self.pad(day, 2))"
    }

    package static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}

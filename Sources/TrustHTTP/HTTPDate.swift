import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The preferred HTTP date format, IMF-fixdate (RFC 9110 §5.6.7: `Sun, 06 Nov 1994 08:49:37 GMT`). The two
/// obsolete formats a recipient should also accept are read as no date (for Expires: already expired), which only
/// costs a cache entry. Hand-written: Foundation's date formatters need locale data this package does not load.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    static func parse(_ text: String) -> Date? {
        let parts = text.trimmingASCIIBlanks().split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0].count == 4, parts[0].last == ",", parts[5] == "GMT", parts[1].count == 2, let day = Int64(parts[1]),
            let month = months.firstIndex(of: parts[2].lowercased()), parts[3].count == 4, let year = Int64(parts[3])
        else { return nil }
        let time = parts[4].split(separator: ":", omittingEmptySubsequences: false)
        guard time.count == 3, time.allSatisfy({ $0.count == 2 }), let hour = Int64(time[0]), let minute = Int64(time[1]),
            let second = Int64(time[2]), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        let date = CivilDate(year: year, month: Int64(month + 1), day: day)
        return date.date(secondsIntoDay: Double(hour * 3_600 + minute * 60 + second))
    }
}

import Foundation
import Testing

@testable import Trust

@Suite("RFC 3339 timestamps")
struct RFC3339Tests {
    @Test("Formatting agrees with ISO8601DateFormatter (fractional seconds, UTC), rounding to the millisecond")
    func formattingAgreesWithFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let seed = UInt64.random(in: 1...UInt64.max)
        print("RFC3339Tests.formattingAgreesWithFoundation seed \(seed)")
        var generator = SeededGenerator(seed: seed)
        // 1583 to 9999. Before the Gregorian reform (1582-10-15), ISO8601DateFormatter (ICU) prints Julian dates;
        // RFC3339.string stays proleptic Gregorian, as ISO 8601 (which RFC 3339 profiles) and X.509 times count.
        let first = -12_212_553_600.0
        let last = 253_402_300_799.999
        let edges: [Double] = [
            0, -0.001, 0.0005, -0.0005, 1.9995, 951_782_400, 951_868_799.999, 4_107_542_400, 1_709_251_200.999,
            253_402_300_799.999, first, first + 0.001, -2_208_988_800, 68_256_000, 1_735_689_599.9996,
            // Half a millisecond: ties go to the later time, before 1970 too.
            -3_191_831_736.2155, -11_939_206_149.1505, 1_709_251_200.0005, -0.0015,
        ]
        let random = (0..<30_000).map { index in
            // Whole milliseconds (what certificates and configurations carry), ties, and any fraction.
            let value = Double.random(in: first...last, using: &generator)
            switch index % 3 {
            case 0: return (value * 1000).rounded() / 1000
            case 1: return ((value * 1000).rounded() + 0.5) / 1000
            default: return value
            }
        }
        for seconds in edges + random {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(RFC3339.string(date) == formatter.string(from: date), "\(seconds) seconds since 1970, seed \(seed)")
        }
    }

    @Test("What it formats, it parses back to the same millisecond")
    func roundTrip() throws {
        for text in ["2024-02-29T23:59:59.999Z", "1950-01-01T00:00:00.000Z", "2000-03-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"] {
            let date = try #require(RFC3339.parse(text))
            #expect(RFC3339.string(date) == text)
        }
        #expect(RFC3339.string(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59.000Z")
        #expect(RFC3339.string(.distantFuture) == "4001-01-01T00:00:00.000Z")
        // Proleptic Gregorian before the reform: 1582-10-04 (Julian) was followed by 1582-10-15.
        #expect(RFC3339.string(Date(timeIntervalSince1970: -12_219_292_800 - 86_400)) == "1582-10-14T00:00:00.000Z")
        #expect(RFC3339.string(Date(timeIntervalSince1970: -62_135_596_800)) == "0001-01-01T00:00:00.000Z")
    }

    @Test("Text parses and prints back unchanged, before the Gregorian reform too (seeded, years 0000-9999)")
    func textRoundTripAcrossTheCalendar() throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        print("RFC3339Tests.textRoundTripAcrossTheCalendar seed \(seed)")
        var generator = SeededGenerator(seed: seed)
        // 0035-01-01 (Julian) is 0034-12-30 (proleptic Gregorian): a parser on Foundation's Gregorian calendar,
        // which is Julian before 1582-10-15, read back what this prints two days early.
        var texts = ["0034-12-30T00:00:00.000Z", "0000-01-01T00:00:00.000Z", "0000-02-29T12:00:00.000Z", "1582-10-10T00:00:00.000Z"]
        for _ in 0..<20_000 {
            let day = CivilDate(daysSince1970: Int64.random(in: -719_528...2_932_896, using: &generator))  // 0000-01-01...9999-12-31
            let milliseconds = Int64.random(in: 0..<86_400_000, using: &generator)
            let pad = CivilDate.pad
            texts.append(
                "\(day.text)T\(pad(milliseconds / 3_600_000, 2)):\(pad(milliseconds / 60_000 % 60, 2)):\(pad(milliseconds / 1000 % 60, 2)).\(pad(milliseconds % 1000, 3))Z"
            )
        }
        for text in texts {
            let date = try #require(RFC3339.parse(text), "\(text), seed \(seed)")
            #expect(RFC3339.string(date) == text, "seed \(seed)")
        }
        // 1500 was a Julian leap year, not a Gregorian one (divisible by 100, not by 400).
        #expect(RFC3339.parse("1500-02-29T00:00:00Z") == nil && RFC3339.parse("1600-02-29T00:00:00Z") != nil)
        #expect(RFC3339.parse("2023-02-29T00:00:00Z") == nil && RFC3339.parse("2024-04-31T00:00:00Z") == nil)
        #expect(RFC3339.parse("2024-02-29T00:00:00+01:00") == Date(timeIntervalSince1970: 1_709_161_200))
    }

    @Test("The grammar of RFC 3339 §5.6, read byte by byte: what it accepts and what it refuses")
    func grammar() throws {
        let moment = try #require(RFC3339.parse("2024-03-01T12:30:45Z"))
        for same in ["2024-03-01t12:30:45z", "2024-03-01 12:30:45Z", "2024-03-01T13:30:45+01:00", "2024-03-01T11:00:45-01:30"] {
            #expect(RFC3339.parse(same) == moment, "\(same)")
        }
        #expect(RFC3339.parse("2024-03-01T12:30:45.25Z") == moment.addingTimeInterval(0.25))
        #expect(RFC3339.parse("2024-03-01T12:30:60Z") != nil)  // a leap second (time-second allows 60)
        let refused = [
            "", "2024-03-01", "2024-03-01T12:30Z", "2024-03-01T12:30:45", "2024-3-01T12:30:45Z", "2024-03-01T12:30:45.Z",
            "2024-03-01T12:30:45ZZ", "2024-03-01T12:30:45+0100", "2024-03-01T12:30:45+24:00", "2024-03-01T12:30:45+01:60",
            "2024-03-01X12:30:45Z", "2024-13-01T12:30:45Z", "2024-03-00T12:30:45Z", "2024-03-01T24:00:00Z", "2024-03-01T12:60:45Z",
            "2024-03-01T12:30:61Z", " 2024-03-01T12:30:45Z", "2024-03-01T12:30:45Z ", "２０２４-03-01T12:30:45Z", "2024-03-01T12:30:4٥Z",
            "+2024-03-01T12:30:45Z", "2024-03-01T12:30:45.1e3Z",
        ]
        for text in refused { #expect(RFC3339.parse(text) == nil, "\(text)") }
    }

    @Test("Civil days and day counts are inverse, and agree with Foundation from the reform on")
    func civilDays() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        for days in stride(from: Int64(-800_000), through: 3_000_000, by: 7) {
            let day = CivilDate(daysSince1970: days)
            if !day.isValid || day.daysSince1970 != days { Issue.record("day \(days) is \(day.text), counted as \(day.daysSince1970)") }
            if days >= -141_427, days % 4_999 == 0 {  // 1582-10-15 on
                let components = calendar.dateComponents([.year, .month, .day], from: day.date())
                #expect([components.year, components.month, components.day].map { Int64($0 ?? 0) } == [day.year, day.month, day.day])
            }
        }
        #expect(CivilDate(daysSince1970: -141_428).text == "1582-10-14" && CivilDate(daysSince1970: 0).text == "1970-01-01")
    }
}

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
        let first = -12_212_553_600.0, last = 253_402_300_799.999
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
}

import Testing
import Trust

@testable import trust

/// `-w`'s numbers (`%{time_total}` as `%.6f`, `%{speed_download}` as `%.0f`, curl's printf formats), written without
/// `String(format:)`.
@Suite("Fixed-point numbers as printf writes them")
struct FixedPointTests {
    @Test("Digits, padding, rounding half to even, signs and what cannot be written")
    func text() {
        #expect(FixedPoint.text(0, digits: 6) == "0.000000")
        #expect(FixedPoint.text(1.5, digits: 6) == "1.500000")
        #expect(FixedPoint.text(0.0000004, digits: 6) == "0.000000" && FixedPoint.text(0.0000006, digits: 6) == "0.000001")
        #expect(FixedPoint.text(12.3456789, digits: 6) == "12.345679")
        #expect(FixedPoint.text(2.5, digits: 0) == "2" && FixedPoint.text(3.5, digits: 0) == "4" && FixedPoint.text(1234.4, digits: 0) == "1234")
        #expect(FixedPoint.text(-0.25, digits: 1) == "-0.2" && FixedPoint.text(-1.5, digits: 0) == "-2")
        #expect(FixedPoint.text(12.34, digits: 1) == "12.3")
        #expect(FixedPoint.text(.infinity, digits: 6) == "0.000000" && FixedPoint.text(.nan, digits: 0) == "0")
    }

    @Test("Percent-encoding keeps exactly the characters it is told to keep")
    func percentEncoding() {
        #expect("a b/ü~".percentEncoded(keeping: .uriUnreserved) == "a%20b%2F%C3%BC~")
        #expect("p@ss:w%rd!".percentEncoded(keeping: .uriUserAllowed) == "p%40ss%3Aw%25rd!")
        #expect("p%40ss%3Aw%25rd!".percentDecoded == "p@ss:w%rd!")
        #expect("%zz".percentDecoded == nil && "%C3".percentDecoded == nil && "%4".percentDecoded == nil)
    }
}

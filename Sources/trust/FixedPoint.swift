/// Numbers written with a fixed count of decimals, as C's `printf("%.Nf")` writes them (curl's `-w` variables are
/// `%.6f` seconds and `%.0f` bytes a second): `String(format:)` is in full Foundation only.
enum FixedPoint {
    /// `value` rounded to `digits` decimals (half to even, as printf rounds an exact half), written with exactly that
    /// many (none and no point when `digits` is 0); a value that is not finite, or too large to write this way, as 0.
    static func text(_ value: Double, digits: Int) -> String {
        let digits = min(max(digits, 0), 9)
        var scale: Int64 = 1
        for _ in 0..<digits { scale *= 10 }
        let scaled = (value * Double(scale)).rounded(.toNearestOrEven)
        guard scaled.isFinite, abs(scaled) < 9.0e18 else { return digits == 0 ? "0" : "0." + String(repeating: "0", count: digits) }
        let units = Int64(scaled)
        let sign = units < 0 ? "-" : ""
        let magnitude = units.magnitude
        let whole = magnitude / UInt64(scale)
        guard digits > 0 else { return sign + String(whole) }
        let fraction = String(magnitude % UInt64(scale))
        return sign + String(whole) + "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }
}

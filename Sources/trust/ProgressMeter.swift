import Foundation

/// curl's progress meter (lib/progress.c), download columns only: shown on stderr when stderr is
/// a terminal and the body does not go to the terminal, never with `-s` or `--no-progress-meter`.
struct ProgressMeter: Sendable {
    /// curl's two header lines.
    let header = """
          % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current
                                         Dload  Upload   Total   Spent    Left  Speed

        """

    /// One meter line (without the leading carriage return).
    func line(received: Int64, expected: Int64?, elapsed: Double, currentSpeed: Double?) -> String {
        let total = expected ?? 0
        let percent = total > 0 ? Int(min(100, received * 100 / total)) : 0
        let average = elapsed > 0 ? Int64(Double(received) / elapsed) : 0
        let current = currentSpeed.map { Int64($0) } ?? average
        let totalTime = total > 0 && average > 0 ? Double(total) / Double(average) : 0
        let left = total > 0 && average > 0 ? max(0, totalTime - elapsed) : 0
        return Self.pad(percent, 3) + " " + Self.size(total) + "  " + Self.pad(percent, 3) + " " + Self.size(received) + "  "
            + Self.pad(0, 3) + " " + Self.size(0) + "  " + Self.size(average) + "  " + Self.size(0) + " "
            + Self.time(totalTime) + " " + Self.time(elapsed) + " " + Self.time(left) + " " + Self.size(current)
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: " ", count: max(0, width - text.count)) + text
    }

    /// curl's `max5data`: a size in at most five characters.
    static func size(_ bytes: Int64) -> String {
        let kilo: Int64 = 1024, mega = kilo * 1024, giga = mega * 1024
        if bytes < 100_000 { return pad(Int(bytes), 5) }
        if bytes < 10_000 * kilo { return pad(Int(bytes / kilo), 4) + "k" }
        if bytes < 100 * mega { return pad(Int(bytes / mega), 2) + "." + String((bytes % mega) / (mega / 10)) + "M" }
        if bytes < 10_000 * mega { return pad(Int(bytes / mega), 4) + "M" }
        if bytes < 100 * giga { return pad(Int(bytes / giga), 2) + "." + String((bytes % giga) / (giga / 10)) + "G" }
        return pad(Int(bytes / giga), 4) + "G"
    }

    /// curl's `time2str`: `--:--:--` when unknown, else `H:MM:SS` in eight characters.
    static func time(_ seconds: Double) -> String {
        guard seconds > 0, seconds.isFinite else { return "--:--:--" }
        let whole = Int(seconds)
        let hours = whole / 3600, minutes = (whole / 60) % 60, rest = whole % 60
        if hours >= 100 { return pad(hours / 24, 3) + "d " + pad(hours % 24, 2) + "h" }
        return pad(hours, 2) + ":" + String(format: "%02d:%02d", minutes, rest)
    }
}

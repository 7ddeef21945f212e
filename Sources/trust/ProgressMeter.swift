#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// curl's progress meter (lib/progress.c, `progress_meter`), download and upload columns: shown on stderr
/// unless `-s`, `--no-progress-meter`, or the body goes to a terminal, as curl does (stderr need not be one:
/// `curl -o file URL 2>log` writes the meter into the log).
///
/// Every figure is curl's integer arithmetic: sizes in whole bytes, speeds in bytes per second, times in whole
/// seconds, percentages `done / (total / 100)` above 10,000 bytes (`done * 100 / total` below).
struct ProgressMeter: Sendable {
    /// One direction of the transfer: bytes so far, and the size announced for it (`Content-Length`, or the
    /// request body's length), if any.
    struct Direction: Sendable, Equatable {
        var bytes: Int64 = 0
        var expected: Int64?
    }

    /// curl's two header lines.
    let header = """
          % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current
                                         Dload  Upload   Total   Spent    Left  Speed

        """

    /// One meter line (without the leading carriage return). `currentSpeed`: both directions' bytes per second
    /// over the last few seconds; `nil` takes the averages' sum, as curl does in the first second.
    func line(download: Direction, upload: Direction, elapsed: Double, currentSpeed: Double?) -> String {
        // Microseconds, as curl's `timespent`; speeds are averages since the start.
        let microseconds = Int64((max(0, elapsed) * 1_000_000).rounded(.down))
        let downloadSpeed = Self.speed(download.bytes, microseconds)
        let uploadSpeed = Self.speed(upload.bytes, microseconds)
        // Percent and time estimate of a direction whose size is known, once bytes have moved.
        func estimate(_ direction: Direction, _ speed: Int64) -> (percent: Int64, seconds: Int64) {
            guard let expected = direction.expected, speed > 0 else { return (0, 0) }
            return (Self.percent(direction.bytes, of: expected), expected / speed)
        }
        let (downloadPercent, downloadSeconds) = estimate(download, downloadSpeed)
        let (uploadPercent, uploadSeconds) = estimate(upload, uploadSpeed)
        // The slower direction's estimate is the transfer's.
        let totalSeconds = max(downloadSeconds, uploadSeconds)
        let spentSeconds = microseconds / 1_000_000
        let expected = Self.adding(upload.expected ?? upload.bytes, download.expected ?? download.bytes)
        let done = Self.adding(download.bytes, upload.bytes)
        let current = currentSpeed.map { $0.isFinite ? Int64(min(max(0, $0), 9.0e18)) : 0 } ?? Self.adding(downloadSpeed, uploadSpeed)
        return Self.pad(Self.percent(done, of: expected), 3) + " " + Self.size(expected) + "  "
            + Self.pad(downloadPercent, 3) + " " + Self.size(download.bytes) + "  "
            + Self.pad(uploadPercent, 3) + " " + Self.size(upload.bytes) + "  "
            + Self.size(downloadSpeed) + "  " + Self.size(uploadSpeed) + " "
            + Self.time(totalSeconds) + " " + Self.time(spentSeconds) + " " + Self.time(totalSeconds > 0 ? totalSeconds - spentSeconds : 0) + " "
            + Self.size(current)
    }

    /// curl's percentage: `done / (total / 100)` when the total is over 10,000 (no overflow), else `done * 100 / total`.
    static func percent(_ done: Int64, of total: Int64) -> Int64 {
        if total > 10_000 { return done / (total / 100) }
        return total > 0 ? done * 100 / total : 0
    }

    /// curl's `trspeed`: bytes per second from bytes and microseconds, without overflow.
    static func speed(_ bytes: Int64, _ microseconds: Int64) -> Int64 {
        if microseconds < 1 { return bytes.multipliedReportingOverflow(by: 1_000_000).overflow ? .max : bytes * 1_000_000 }
        if bytes < Int64.max / 1_000_000 { return bytes * 1_000_000 / microseconds }
        return microseconds >= 1_000_000 ? bytes / (microseconds / 1_000_000) : .max
    }

    /// A sum that stops at `Int64.max`, as curl caps its total.
    static func adding(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: " ", count: max(0, width - text.count)) + text
    }

    /// curl's `max5data`: a size in at most five characters.
    static func size(_ bytes: Int64) -> String {
        let kilo: Int64 = 1024
        let mega = kilo * 1024
        let giga = mega * 1024
        let tera = giga * 1024
        if bytes < 100_000 { return pad(bytes, 5) }
        if bytes < 10_000 * kilo { return pad(bytes / kilo, 4) + "k" }
        if bytes < 100 * mega { return pad(bytes / mega, 2) + "." + String((bytes % mega) / (mega / 10)) + "M" }
        if bytes < 10_000 * mega { return pad(bytes / mega, 4) + "M" }
        if bytes < 100 * giga { return pad(bytes / giga, 2) + "." + String((bytes % giga) / (giga / 10)) + "G" }
        if bytes < 10_000 * giga { return pad(bytes / giga, 4) + "G" }
        if bytes < 10_000 * tera { return pad(bytes / tera, 4) + "T" }
        return pad(bytes / (tera * 1024), 4) + "P"
    }

    /// curl's `time2str`: `--:--:--` when unknown or under a second, `H:MM:SS` up to 99 hours, then days and
    /// hours (`  4d 07h`), then days (`  12345d`); always eight characters.
    static func time(_ seconds: Int64) -> String {
        guard seconds > 0 else { return "--:--:--" }
        let hours = seconds / 3600
        if hours <= 99 { return pad(hours, 2) + ":" + zeroPadded((seconds % 3600) / 60) + ":" + zeroPadded(seconds % 60) }
        let days = seconds / 86_400
        if days <= 999 { return pad(days, 3) + "d " + zeroPadded((seconds % 86_400) / 3600) + "h" }
        return pad(days, 7) + "d"
    }

    private static func zeroPadded(_ value: Int64) -> String {
        value < 10 ? "0\(value)" : String(value)
    }
}

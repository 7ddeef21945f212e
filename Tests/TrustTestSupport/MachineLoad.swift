import Foundation

/// How much of the machine's processor time other processes take, for ``TestPacing``: from Linux's `/proc/stat`
/// (all processors' busy time) less this process's own and its waited-for children's (`/proc/self/stat`'s utime,
/// stime, cutime, cstime; proc(5)), over the last second or more. nil where there is no `/proc` (not Linux): the
/// pacing then keeps its limit.
package final class MachineLoad: @unchecked Sendable {
    package static let shared = MachineLoad()

    package init() {}

    private let lock = NSLock()
    private var last: (at: ContinuousClock.Instant, busy: Int, total: Int, own: Int)?
    private var share: Double?
    private var reportedBusy: Bool?

    /// The share (0 to 1) of all processors' time that other processes used over the last interval of at least a
    /// second; sampled when asked, at most once a second.
    package func othersShare() -> Double? {
        lock.lock()
        defer { lock.unlock() }
        let now = ContinuousClock.now
        if let last, now - last.at < .seconds(1) { return share }
        guard let (busy, total) = Self.machineTicks(), let own = Self.ownTicks() else { return nil }
        if let last, total > last.total {
            let others = Double((busy - last.busy) - (own - last.own)) / Double(total - last.total)
            share = min(1, max(0, others))
        }
        last = (now, busy, total, own)
        return share
    }

    /// Whether other processes load the machine: once they take a third of its processors' time, until they take
    /// less than a tenth. (Without that margin the pacing swung: with fewer cases of ours running, the other
    /// processes' share rose over the mark, with more it fell under it.) Prints a line when it changes, so a slow run
    /// says why it is slow.
    func isBusy() -> Bool {
        guard let share = othersShare() else { return false }
        lock.lock()
        defer { lock.unlock() }
        let busy = (reportedBusy ?? false) ? share >= 0.1 : share >= 1.0 / 3.0
        if busy != (reportedBusy ?? false) {
            print("[pacing] other processes use \(Int(share * 100))% of the processors: " + (busy ? "fewer" : "all") + " test cases at once")
        }
        reportedBusy = busy
        return busy
    }

    /// All processors' busy and total time, in clock ticks: /proc/stat's first line (user nice system idle iowait
    /// irq softirq steal ...).
    private static func machineTicks() -> (busy: Int, total: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8), let line = text.split(separator: "\n").first,
            line.hasPrefix("cpu ")
        else { return nil }
        let fields = line.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard fields.count >= 8 else { return nil }
        let idle = fields[3] + fields[4]
        let busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7]
        return (busy, busy + idle)
    }

    /// This process's and its waited-for children's processor time, in clock ticks: /proc/self/stat's fields 14 to
    /// 17, counted after the command name (which is in parentheses and may hold spaces).
    private static func ownTicks() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return nil }
        // After ") ": field 3 (state) onwards; utime is field 14, so index 11 here.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 14 else { return nil }
        return fields[11...14].compactMap { Int($0) }.reduce(0, +)
    }
}

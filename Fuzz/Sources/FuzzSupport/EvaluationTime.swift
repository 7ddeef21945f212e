import Foundation

/// The evaluation time of a fuzzing run, fixed so that a verdict does not change under it: `TRUST_FUZZ_TIME`
/// (seconds since 1970) replays a saved input at the instant it was found, else now. Printed to stderr with the
/// target's name, so a crash report carries it.
public func fixedEvaluationTime(target: String) -> Date {
    let time = ProcessInfo.processInfo.environment["TRUST_FUZZ_TIME"].flatMap(TimeInterval.init).map(Date.init(timeIntervalSince1970:)) ?? Date()
    FileHandle.standardError.write(Data("\(target): evaluation time TRUST_FUZZ_TIME=\(Int(time.timeIntervalSince1970))\n".utf8))
    return time
}

/// A harness could not produce its figures (a benchmark chain that did not validate, a child process that
/// failed): printed by ArgumentParser, exit 1. Bad options are `ValidationError`s (exit 64).
struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

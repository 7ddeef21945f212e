/// Stops the run when a property of the code under test does not hold.
///
/// `fatalError` raises a signal that libFuzzer reports as a crash, saving the input as an artifact,
/// so a broken property is found, minimised and replayed like any other crash.
public func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    if !condition() {
        fatalError("property violated: \(message())", file: file, line: line)
    }
}

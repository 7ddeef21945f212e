/// Times `body` (printed, never asserted: the bound is that it finishes with the right answer).
package func timed<T>(_ what: String, _ body: () async throws -> T) async rethrows -> T {
    let clock = ContinuousClock()
    let start = clock.now
    let result = try await body()
    let elapsed = start.duration(to: clock.now)
    print("[hostile] \(what): \(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000) ms")
    return result
}

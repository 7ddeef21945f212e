import NIOConcurrencyHelpers

/// "The first answer counts": for a continuation or promise that several parties may complete — a
/// handler and its timer, a delegate that calls its completion handler twice, a stream that is
/// created and closed at once — ``claim()`` is `true` for exactly one caller, whichever comes first.
final class FirstAnswer: Sendable {
    private let answered = NIOLockedValueBox(false)

    init() {}

    /// `true` the first time it is called, `false` ever after (from any thread).
    func claim() -> Bool {
        answered.withLockedValue { done in
            defer { done = true }
            return !done
        }
    }
}

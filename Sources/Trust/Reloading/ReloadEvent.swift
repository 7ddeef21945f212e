/// What a reloader's observers are told (``Reloading/observe(_:)``, ``Reloading/events()``).
public enum ReloadEvent<Value: Sendable, Rejection: Error & Sendable & Hashable>: Sendable {
    /// `value` is in force, under `generation`.
    case reloaded(generation: UInt64, value: Value)
    /// Changed files were refused (told once for the same contents); the value in force stays.
    case rejected(Rejection)

    /// The generation taken, for a ``reloaded(generation:value:)`` event.
    public var generation: UInt64? {
        if case .reloaded(let generation, _) = self { return generation }
        return nil
    }

    /// The refusal, for a ``rejected(_:)`` event.
    public var rejection: Rejection? {
        if case .rejected(let rejection) = self { return rejection }
        return nil
    }
}

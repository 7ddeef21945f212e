/// What a reload or a poll did (``Reloading/reload()``, ``Reloading/poll()``). The three outcomes are all there
/// are: a reload takes the files, refuses them, or finds nothing to do.
public enum ReloadOutcome<Rejection: Error & Sendable & Hashable>: Sendable, Hashable {
    /// The files hold the value in force (or the contents last refused), or did not change: nothing was taken.
    case unchanged
    /// A new value is in force, under this generation.
    case reloaded(generation: UInt64)
    /// The files changed but cannot be used: the value in force stays.
    case rejected(Rejection)

    /// The generation taken, when a new value was put in force.
    public var generation: UInt64? {
        if case .reloaded(let generation) = self { return generation }
        return nil
    }

    /// The refusal, when the files were refused.
    public var rejection: Rejection? {
        if case .rejected(let rejection) = self { return rejection }
        return nil
    }
}

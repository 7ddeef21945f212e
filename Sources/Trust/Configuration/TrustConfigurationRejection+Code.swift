extension TrustConfigurationRejection {
    /// A stable name of the case, for metrics labels and log metadata (no value from the file in it).
    public var code: String {
        switch detail {
        case .unreadable: return "unreadable"
        case .malformed: return "malformed"
        case .pinsExpired: return "pins-expired"
        case .wouldLockOut: return "would-lock-out"
        case .badSignature: return "bad-signature"
        case .rollback: return "rollback"
        case .bundleExpired: return "bundle-expired"
        case .fetchFailed: return "fetch-failed"
        case .sequenceNotRecorded: return "sequence-not-recorded"
        }
    }

    /// For a configuration that is not valid (code `malformed`): every problem, where and what; empty otherwise.
    public var problems: [TrustConfigurationProblem] {
        guard case .malformed(let error) = detail else { return [] }
        return error.problems
    }
}

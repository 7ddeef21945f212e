extension TrustConfigurationRejection {
    /// A stable name of the case, for metrics labels and log metadata (no value from the file in it).
    public var code: String {
        switch self {
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
}

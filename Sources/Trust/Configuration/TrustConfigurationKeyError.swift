/// Why a key for signed trust-configuration bundles could not be read or used: what was wrong with it, never the
/// key's bytes.
public struct TrustConfigurationKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public let reason: String

    /// An error saying `reason`.
    package init(_ reason: String) {
        self.reason = reason
    }

    /// The reason.
    public var description: String { reason }
}

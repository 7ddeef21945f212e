/// A SPIFFE trust configuration that could never trust anything, refused when the evaluator is built.
public enum SPIFFEConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No allowed ID: every peer would be refused (or, worse, any ID accepted).
    case noAllowedIDs
    /// No bundle holds an anchor.
    case noBundles
    /// An allowed ID (or trust domain) whose trust domain has no bundle; the trusted ones follow.
    case noBundleForAllowedID(String, trusted: [String])

    /// What is wrong and how to fix it.
    public var description: String {
        switch self {
        case .noAllowedIDs: return "no SPIFFE ID is allowed: give at least one ID, trust domain or path prefix"
        case .noBundles: return "no SPIFFE bundle holds an anchor: give the bundle of each trust domain to trust"
        case .noBundleForAllowedID(let id, let trusted):
            return DisplayText.escaped(
                "\(id) is allowed but no bundle is given for its trust domain (bundles: \(trusted.isEmpty ? "none" : trusted.joined(separator: ", ")))")
        }
    }
}

/// A SPIFFE trust configuration that could never trust anything, refused when the evaluator is built.
public struct SPIFFEConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error with its data, for this package's code (cases come in minor versions without breaking a
    /// client, who shows the error: its description says what is wrong).
    package let detail: Detail

    package init(_ detail: Detail) { self.detail = detail }

    /// What is wrong and how to fix it.
    public var description: String { detail.description }

    /// No allowed ID: every peer would be refused (or, worse, any ID accepted).
    package static let noAllowedIDs = Self(.noAllowedIDs)
    /// No bundle holds an anchor.
    package static let noBundles = Self(.noBundles)
    /// An allowed ID (or trust domain) whose trust domain has no bundle; the trusted ones follow.
    package static func noBundleForAllowedID(_ value0: String, trusted: [String]) -> Self { Self(.noBundleForAllowedID(value0, trusted: trusted)) }
}

extension SPIFFEConfigurationError {
    /// The cases, exhaustive inside this package.
    package enum Detail: Hashable, Sendable {
        /// No allowed ID: every peer would be refused (or, worse, any ID accepted).
        case noAllowedIDs
        /// No bundle holds an anchor.
        case noBundles
        /// An allowed ID (or trust domain) whose trust domain has no bundle; the trusted ones follow.
        case noBundleForAllowedID(String, trusted: [String])

        /// What is wrong and how to fix it.
        package var description: String {
            switch self {
            case .noAllowedIDs: return "no SPIFFE ID is allowed: give at least one ID, trust domain or path prefix"
            case .noBundles: return "no SPIFFE bundle holds an anchor: give the bundle of each trust domain to trust"
            case .noBundleForAllowedID(let id, let trusted):
                return DisplayText.escaped(
                    "\(id) is allowed but no bundle is given for its trust domain (bundles: \(trusted.isEmpty ? "none" : trusted.joined(separator: ", ")))")
            }
        }
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Why a new trust configuration was not put in force. The configuration in force before it stays: a bad file,
/// a bad signature or a replayed bundle never leaves a process with no configuration or a weaker one.
///
/// Every case names what was seen and what was expected; none carries a secret or the file's contents.
public struct TrustConfigurationRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error with its data, for this package's code (cases come in minor versions without breaking a
    /// client, who shows the error: its description says what is wrong).
    package let detail: Detail

    package init(_ detail: Detail) { self.detail = detail }

    /// One line that says what was refused and why.
    public var description: String { detail.description }

    /// The file could not be read (missing, not a regular file, too large, writable by others).
    package static func unreadable(path: String, reason: String) -> Self { Self(.unreadable(path: path, reason: reason)) }
    /// The file was read but is not a valid configuration: every problem found.
    package static func malformed(_ value0: TrustConfigurationFileError) -> Self { Self(.malformed(value0)) }
    /// A host's pin-set in the new configuration has already expired (`pins.expires` is in the past).
    package static func pinsExpired(host: String, expires: Date) -> Self { Self(.pinsExpired(host: host, expires: expires)) }
    /// The new pin-set for `host` contains none of the keys on the path that host presents now, so every
    /// connection to it would be refused. An operator who means it (a compromised key removed) says so in the
    /// file (`"allowLockout": true` in that entry).
    package static func wouldLockOut(host: String, pinsOnPath: [SPKIPin], newPins: [SPKIPin]) -> Self {
        Self(.wouldLockOut(host: host, pinsOnPath: pinsOnPath, newPins: newPins))
    }
    /// A signed bundle's detached Ed25519 signature does not verify with any trusted key, or is missing or
    /// malformed.
    package static func badSignature(reason: String) -> Self { Self(.badSignature(reason: reason)) }
    /// A signed bundle whose `sequence` is not above the last one accepted: a replayed or rolled-back bundle.
    package static func rollback(sequence: UInt64, lastAccepted: UInt64) -> Self { Self(.rollback(sequence: sequence, lastAccepted: lastAccepted)) }
    /// A signed bundle whose `expires` has passed: it is not used, and the built-in configuration applies.
    package static func bundleExpired(expires: Date) -> Self { Self(.bundleExpired(expires: expires)) }
    /// A signed bundle could not be fetched (network, status, size or time limit).
    package static func fetchFailed(reason: String) -> Self { Self(.fetchFailed(reason: reason)) }
    /// A signed bundle verified, but its sequence could not be recorded in the file that keeps the last accepted one:
    /// it is not used, since a restart would then accept an older bundle again.
    package static func sequenceNotRecorded(path: String, reason: String) -> Self { Self(.sequenceNotRecorded(path: path, reason: reason)) }
}

extension TrustConfigurationRejection {
    /// The cases, exhaustive inside this package.
    package enum Detail: Sendable, Hashable {
        /// The file could not be read (missing, not a regular file, too large, writable by others).
        case unreadable(path: String, reason: String)
        /// The file was read but is not a valid configuration: every problem found.
        case malformed(TrustConfigurationFileError)
        /// A host's pin-set in the new configuration has already expired (`pins.expires` is in the past).
        case pinsExpired(host: String, expires: Date)
        /// The new pin-set for `host` contains none of the keys on the path that host presents now, so every
        /// connection to it would be refused. An operator who means it (a compromised key removed) says so in the
        /// file (`"allowLockout": true` in that entry).
        case wouldLockOut(host: String, pinsOnPath: [SPKIPin], newPins: [SPKIPin])
        /// A signed bundle's detached Ed25519 signature does not verify with any trusted key, or is missing or
        /// malformed.
        case badSignature(reason: String)
        /// A signed bundle whose `sequence` is not above the last one accepted: a replayed or rolled-back bundle.
        case rollback(sequence: UInt64, lastAccepted: UInt64)
        /// A signed bundle whose `expires` has passed: it is not used, and the built-in configuration applies.
        case bundleExpired(expires: Date)
        /// A signed bundle could not be fetched (network, status, size or time limit).
        case fetchFailed(reason: String)
        /// A signed bundle verified, but its sequence could not be recorded in the file that keeps the last accepted one:
        /// it is not used, since a restart would then accept an older bundle again.
        case sequenceNotRecorded(path: String, reason: String)

        /// One line that says what was refused and why.
        package var description: String {
            switch self {
            case .unreadable(let path, let reason):
                return "the configuration file \"\(DisplayText.escaped(path))\" could not be read: \(DisplayText.escaped(reason))"
            case .malformed(let error):
                return "the configuration is not valid: \(error)"
            case .pinsExpired(let host, let expires):
                return "the pins for \"\(DisplayText.escaped(host))\" expired at \(RFC3339.string(expires))"
            case .wouldLockOut(let host, let onPath, let newPins):
                return "the new pins for \"\(DisplayText.escaped(host))\" (\(newPins.map(\.description).joined(separator: ", "))) match no key "
                    + "on the path it presents (\(onPath.map(\.description).joined(separator: ", "))): every connection would be refused"
            case .badSignature(let reason):
                return "the configuration bundle's signature is not valid: \(reason)"
            case .rollback(let sequence, let lastAccepted):
                return "the configuration bundle's sequence \(sequence) is not above the last accepted, \(lastAccepted): a replayed or older bundle"
            case .bundleExpired(let expires):
                return "the configuration bundle expired at \(RFC3339.string(expires))"
            case .fetchFailed(let reason):
                return "the configuration bundle could not be fetched: \(reason)"
            case .sequenceNotRecorded(let path, let reason):
                return "the configuration bundle's sequence could not be recorded in \"\(DisplayText.escaped(path))\": "
                    + "\(DisplayText.escaped(reason)); the bundle is not used"
            }
        }
    }
}

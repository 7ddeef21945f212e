import Logging
import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension SignedConfigurationUpdater {
    /// An updater whose accepted configurations go to `target`'s `ReloadingTrustConfiguration/apply(_:baseDirectory:)`:
    /// a bundle `target` refuses (a pin set already expired, one that would lock out a host it trusts now) is
    /// reported with `target`'s reason, and the configuration in force stays. The built-in configuration, put back
    /// when a bundle expires, is applied `allowingLockout`: no host the bundle trusted holds it back. Relative paths
    /// in a bundle's configuration are read from `baseDirectory` (nil: `target`'s).
    public init(
        source: Source, trustedKeys: [TrustConfigurationPublicKey], builtIn: TrustConfiguration, stateFile: String,
        installingInto target: ReloadingTrustConfiguration, baseDirectory: String? = nil,
        configuration: TrustHTTPClientConfiguration = TrustHTTPClientConfiguration(),
        limits: Limits = Limits(), logger: Logger? = nil, onEvent: (@Sendable (Event) -> Void)? = nil
    ) throws(TrustConfigurationRejection) {
        try self.init(
            source: source, trustedKeys: trustedKeys, builtIn: builtIn, stateFile: stateFile, configuration: configuration, limits: limits,
            logger: logger, onEvent: onEvent,
            install: { configuration throws(TrustConfigurationRejection) in try target.apply(configuration, baseDirectory: baseDirectory) },
            fallback: { configuration throws(TrustConfigurationRejection) in
                try target.apply(configuration, baseDirectory: baseDirectory, allowingLockout: true)
            })
    }
}

// Pins and anchors changed from a server faster than the app ships: the release step signs a configuration bundle
// with an Ed25519 key kept off the servers; the app pins the public key, fetches the bundle and its signature, and
// puts the configuration in force only when it verifies, is newer than the last one taken and has not expired.
// A monitoring job fetches what the CDN serves exactly as the apps will, and installs nothing.
import Foundation
import Logging
import Trust
import TrustHTTP

/// The release step: a signed bundle from a configuration file.
public enum TrustBundlePublisher {
    /// What is uploaded: the bundle's bytes and its signature file (base64, one line).
    public struct Published: Sendable {
        public var bundle: [UInt8]
        public var signature: [UInt8]
        public var sequence: UInt64
    }

    /// The signing key as a vault hands it over: the 32 raw bytes of the Ed25519 private key.
    public static func signingKey(raw: [UInt8]) throws -> TrustConfigurationSigningKey {
        try TrustConfigurationSigningKey(rawRepresentation: raw)
    }

    /// Signs the configuration file at `path` (checked as every reader checks it) as bundle `sequence`, valid until
    /// `expires`.
    public static func publish(configurationFile path: String, sequence: UInt64, expires: Date, key: TrustConfigurationSigningKey) throws -> Published {
        let configuration: TrustConfiguration
        do {
            configuration = try TrustConfiguration.load(contentsOf: path)
        } catch {
            // A file that cannot be read names its path; a file that is not valid lists its problems.
            if let file = error.fileError { throw PublishingError.unreadable(file.path) }
            throw error
        }
        guard configuration.version == TrustConfiguration.currentVersion else { throw PublishingError.unsupportedVersion(configuration.version) }
        let bundle = TrustConfigurationBundle(configuration: configuration, sequence: sequence, expires: expires)
        let bytes = Array(bundle.jsonText().utf8)
        let signature = Data(try key.signature(for: bytes)).base64EncodedString() + "\n"
        // What the apps will accept: verified with the public key, the same configuration and sequence.
        let verified = try SignedTrustConfiguration.verify(
            bundle: bytes, signature: Array(signature.utf8), trustedKeys: [key.publicKey], lastAcceptedSequence: nil)
        guard verified.bundle.configuration == configuration, verified.bundle.sequence == sequence, TrustConfigurationBundle.currentVersion == 1 else {
            throw PublishingError.doesNotReadBack
        }
        return Published(bundle: bytes, signature: Array(signature.utf8), sequence: sequence)
    }

    public enum PublishingError: Error {
        case unreadable(String)
        case unsupportedVersion(Int)
        case doesNotReadBack
    }
}

/// The app side: signed updates installed into the app's reloading configuration.
public struct SignedTrustUpdates: Sendable {
    public let updater: SignedConfigurationUpdater
    /// Where the bundle and its signature are fetched from.
    public let source: SignedConfigurationUpdater.Source
    /// The size and time limits of a fetch.
    public let limits = SignedConfigurationUpdater.Limits(maximumBundleSize: 256 << 10, maximumSignatureSize: 200, timeout: .seconds(10))

    /// Updates from `bundleURL` (its signature at `bundleURL` + `.sig`), verified with the keys pinned in the app
    /// (base64, two while the signing key is rotated), installed into `target`; `builtIn` is put back when a bundle
    /// expires. `fetching` is the updater's own client configuration: pins for the configuration server.
    public init(
        bundleURL: URL, pinnedKeys: [String], builtIn: TrustConfiguration, stateFile: String, target: ReloadingTrustConfiguration,
        fetching: TrustHTTPClientConfiguration, logger: Logger? = nil
    ) throws {
        source = SignedConfigurationUpdater.Source(bundleURL: bundleURL)
        updater = try SignedConfigurationUpdater(
            source: source, trustedKeys: try pinnedKeys.map { try TrustConfigurationPublicKey(base64: $0) }, builtIn: builtIn, stateFile: stateFile,
            installingInto: target, configuration: fetching,
            limits: limits, logger: logger)
    }

    /// One line for the startup log.
    public var summary: String {
        "signed trust updates from \(source.bundleURL) (signature \(source.signatureURL.lastPathComponent)); bundles up to "
            + "\(limits.maximumBundleSize) bytes, signatures up to \(limits.maximumSignatureSize), \(limits.timeout) per fetch"
    }

    /// The public keys to pin, from the PEM files the release step publishes (`trust config keygen` writes one).
    public static func pinnedKeys(pem: [String]) throws -> [String] {
        try pem.map { try TrustConfigurationPublicKey(pemEncoded: $0).base64 }
    }

    /// Checks now (at start, and when a push says a bundle was published).
    public func refresh() async -> SignedConfigurationUpdater.Event { await updater.refresh() }

    /// Checks every `interval` until cancelled, as a service's background task.
    public func run(every interval: Duration) async { await updater.run(every: interval) }

    /// The sequence of the last bundle taken, kept across restarts.
    public func lastSequence() async -> UInt64? { await updater.lastAcceptedSequence }
}

/// A monitoring job: verifies what the CDN serves with the apps' keys, records what it would install, installs
/// nothing.
public actor PublishedBundleMonitor {
    private var seen: [Int] = []
    private var updater: SignedConfigurationUpdater?

    public init() {}

    /// Fetches and verifies the bundle at `bundleURL`; the number of host entries it would install, or why not.
    public func check(
        bundleURL: URL, pinnedKey: TrustConfigurationPublicKey, stateFile: String, fetching: TrustHTTPClientConfiguration
    ) async throws -> Result<Int, TrustConfigurationRejection> {
        let record: SignedConfigurationUpdater.Install = { [weak self] configuration in
            await self?.record(configuration.hosts.count)
        }
        let updater = try SignedConfigurationUpdater(
            source: .init(bundleURL: bundleURL, signatureURL: bundleURL.appendingPathExtension("sig")), trustedKeys: [pinnedKey],
            builtIn: TrustConfiguration(), stateFile: stateFile, configuration: fetching, install: record)
        self.updater = updater
        switch await updater.refresh() {
        case .installed, .unchanged: return .success(seen.last ?? 0)
        case .rejected(let rejection), .fellBackToBuiltIn(let rejection), .failedClosed(let rejection, _): return .failure(rejection)
        }
    }

    private func record(_ hosts: Int) { seen.append(hosts) }
}

import Crypto
import Logging
import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Keeps a trust configuration up to date from a server, accepting only bundles signed by a key the application pins
/// in its code (<doc:SignedConfigurationUpdates>).
///
/// Each ``refresh(now:)`` fetches the bundle and its detached signature with a ``TrustHTTPClient`` of its own (its own trust
/// settings — pin the configuration server too — a size limit and a time limit), verifies them with
/// `SignedTrustConfiguration/verify(bundle:signature:trustedKeys:lastAcceptedSequence:now:maximumSize:publicSuffixes:)`,
/// records the accepted sequence in the state file (so a restart does not accept an older bundle again), and only
/// then hands the configuration to `install`. Anything refused leaves the configuration in force as it is, and is
/// reported three ways: the returned ``Event``, the `onEvent` callback and a log line.
///
/// A bundle is used until its `expires`: an expired bundle — fetched, or the one in force when a fetch fails — makes
/// the updater install the built-in configuration it was given, and say so (``Event/fellBackToBuiltIn(_:)``). That
/// installation is not held back by a lock-out check; if it is refused all the same (its own pins have expired), a
/// configuration that trusts no server is installed instead (``Event/failedClosed(expired:builtInRefused:)``): an
/// expired bundle never stays in force. ``run(every:)`` refreshes periodically and at the `expires` in force.
///
/// The application starts with its built-in configuration in force; the updater's state file remembers the last
/// bundle accepted, and that very bundle (the same SHA-256) is accepted again after a restart, any other with the
/// same or a lower sequence is a rollback.
public actor SignedConfigurationUpdater {
    /// Where the bundle and its signature are fetched from.
    public struct Source: Sendable, Hashable {
        /// The bundle (`TrustConfigurationBundle`'s JSON).
        public var bundleURL: URL
        /// Its detached signature (base64 or 64 raw bytes).
        public var signatureURL: URL

        /// The bundle at `bundleURL`, its signature at `signatureURL` (by default the bundle's URL with `.sig` added to
        /// its path, as `trust config sign` names the file).
        public init(bundleURL: URL, signatureURL: URL? = nil) {
            self.bundleURL = bundleURL
            self.signatureURL = signatureURL ?? bundleURL.deletingLastPathComponent().appendingPathComponent(bundleURL.lastPathComponent + ".sig")
        }
    }

    /// Bounds on a fetch.
    public struct Limits: Sendable, Hashable {
        /// The largest bundle fetched, in bytes (default 1 MiB); a larger answer fails the fetch
        /// (``ResponseLimits/maximumBodySize`` of the fetching session).
        public var maximumBundleSize: Int
        /// The largest signature answer, in bytes (default 1 KiB: 88 characters of base64 are expected).
        public var maximumSignatureSize: Int
        /// How long a refresh's fetches may take (default 30 s; the bundle and the signature are fetched at once).
        public var timeout: Duration

        /// Limits; the defaults suit a configuration of a few hundred hosts.
        public init(maximumBundleSize: Int = 1 << 20, maximumSignatureSize: Int = 1024, timeout: Duration = .seconds(30)) {
            self.maximumBundleSize = maximumBundleSize
            self.maximumSignatureSize = maximumSignatureSize
            self.timeout = timeout
        }
    }

    /// What a refresh did.
    public enum Event: Sendable, Hashable, CustomStringConvertible {
        /// A new bundle was verified, its sequence recorded and its configuration installed.
        case installed(sequence: UInt64, expires: Date, signedBy: String)
        /// The bundle fetched is the one already in force.
        case unchanged(sequence: UInt64)
        /// Refused (a bad signature, a rollback, a malformed bundle, a failed fetch, a refused installation): the
        /// configuration in force stays.
        case rejected(TrustConfigurationRejection)
        /// The bundle fetched, or the one in force, has expired: the built-in configuration is in force.
        case fellBackToBuiltIn(TrustConfigurationRejection)
        /// The bundle in force has expired (`expired`) and the built-in configuration was refused too
        /// (`builtInRefused`): a configuration that trusts no server is in force until a valid bundle is installed.
        case failedClosed(expired: TrustConfigurationRejection, builtInRefused: TrustConfigurationRejection)

        /// One line for a log.
        public var description: String {
            switch self {
            case .installed(let sequence, let expires, let key):
                return "signed configuration \(sequence) installed (expires \(RFC3339.string(expires)), signed by \(key))"
            case .unchanged(let sequence): return "signed configuration \(sequence) unchanged"
            case .rejected(let rejection): return "signed configuration refused: \(rejection); the configuration in force stays"
            case .fellBackToBuiltIn(let rejection): return "signed configuration not used: \(rejection); the built-in configuration is in force"
            case .failedClosed(let expired, let builtInRefused):
                return "signed configuration not used: \(expired); the built-in configuration was refused (\(builtInRefused)): no server is trusted"
            }
        }
    }

    /// Hands an accepted configuration over (to a `ReloadingTrustConfiguration`'s `apply`, say); a rejection it
    /// throws is reported and leaves the bundle not in force.
    public typealias Install = @Sendable (TrustConfiguration) async throws(TrustConfigurationRejection) -> Void

    /// What is in force, as far as the updater knows.
    enum InForce: Sendable, Hashable {
        case builtIn
        case bundle(sequence: UInt64, expires: Date, digest: [UInt8])
        /// The configuration that trusts no server, since the built-in one was refused.
        case closed(expired: TrustConfigurationRejection, builtInRefused: TrustConfigurationRejection)
    }

    /// What is installed when the built-in configuration is refused: every host must present a key whose SPKI
    /// digest is all zeros or all ones, which no key has (a preimage of SHA-256).
    static let trustsNothing: TrustConfiguration = {
        var configuration = TrustConfiguration()
        let pins = [UInt8(0), 0xFF].compactMap { try? SPKIPin(digest: [UInt8](repeating: $0, count: 32)) }
        configuration.base.pins = TrustConfiguration.Pins(sha256: pins)
        configuration.base.mode = .enforce
        return configuration
    }()

    let source: Source
    let trustedKeys: [TrustConfigurationPublicKey]
    let builtIn: TrustConfiguration
    let stateFile: String
    let limits: Limits
    let logger: Logger?
    let onEvent: (@Sendable (Event) -> Void)?
    let install: Install
    /// Installs the built-in configuration (or ``trustsNothing``) when a bundle expires: `install`, or one that a
    /// lock-out check cannot refuse.
    let fallback: Install
    let session: TrustHTTPClient
    var lastAccepted: AcceptedBundleRecord?
    var inForce = InForce.builtIn
    var running: Task<Event, Never>?

    /// - Parameters:
    ///   - source: where the bundle and its signature are fetched from.
    ///   - trustedKeys: the public keys pinned in the application (two while the signing key is rotated).
    ///   - builtIn: the configuration compiled into the application, installed when a bundle has expired.
    ///   - stateFile: where the last accepted sequence is kept (created private, 0600); its folder must exist.
    ///   - configuration: the fetching session's configuration: its own trust (pins for the configuration server);
    ///     its body limit and timeouts are cut to `limits`.
    ///   - limits: the size and time limits of a fetch.
    ///   - logger: where each event is logged (installed and unchanged at info, refusals at warning).
    ///   - onEvent: called with each event, as ``refresh(now:)`` returns it.
    ///   - install: hands an accepted configuration over; what it throws is reported and the bundle is not in force.
    /// - Throws: `TrustConfigurationRejection/unreadable(path:reason:)` when the state file exists but cannot be
    ///   read or is not one this type wrote (starting without it would reopen the rollback window), and
    ///   `TrustConfigurationRejection/fetchFailed(reason:)` when the session cannot be made.
    public init(
        source: Source, trustedKeys: [TrustConfigurationPublicKey], builtIn: TrustConfiguration, stateFile: String,
        configuration: TrustHTTPClientConfiguration = TrustHTTPClientConfiguration(), limits: Limits = Limits(), logger: Logger? = nil,
        onEvent: (@Sendable (Event) -> Void)? = nil, install: @escaping Install
    ) throws(TrustConfigurationRejection) {
        try self.init(
            source: source, trustedKeys: trustedKeys, builtIn: builtIn, stateFile: stateFile, configuration: configuration, limits: limits,
            logger: logger, onEvent: onEvent, install: install, fallback: install)
    }

    /// As above; `fallback` installs the built-in configuration when a bundle expires.
    init(
        source: Source, trustedKeys: [TrustConfigurationPublicKey], builtIn: TrustConfiguration, stateFile: String,
        configuration: TrustHTTPClientConfiguration, limits: Limits, logger: Logger?, onEvent: (@Sendable (Event) -> Void)?,
        install: @escaping Install, fallback: @escaping Install
    ) throws(TrustConfigurationRejection) {
        self.lastAccepted = try AcceptedBundleRecord.read(stateFile)
        var configuration = configuration
        configuration.responseLimits.maximumBodySize = max(limits.maximumBundleSize, limits.maximumSignatureSize)
        configuration.requestTimeout = min(configuration.requestTimeout, limits.timeout)
        configuration.connectTimeout = min(configuration.connectTimeout, limits.timeout)
        configuration.maximumRedirects = min(configuration.maximumRedirects, 3)
        configuration.credentialStore = nil
        do {
            self.session = try TrustHTTPClient(configuration: configuration)
        } catch {
            throw .fetchFailed(reason: "the fetching session could not be made: \(error)")
        }
        (self.source, self.trustedKeys, self.builtIn, self.stateFile) = (source, trustedKeys, builtIn, stateFile)
        (self.limits, self.logger, self.onEvent, self.install, self.fallback) = (limits, logger, onEvent, install, fallback)
    }

    /// The sequence of the last bundle accepted (kept in the state file), nil when none ever was.
    public var lastAcceptedSequence: UInt64? { lastAccepted?.sequence }

    /// Fetches, verifies and installs the bundle once. A refresh called while one runs waits for it and returns its
    /// event: refreshes never interleave.
    @discardableResult
    public func refresh(now: Date = Date()) async -> Event {
        if let running { return await running.value }
        let task = Task { await self.fetchAndAccept(now: now) }
        running = task
        let event = await task.value
        running = nil
        return event
    }

    /// Refreshes now, then every `interval` — and at the `expires` of the bundle in force when that comes first, so
    /// an expired bundle is replaced by the built-in configuration even when no fetch succeeds — until the task is
    /// cancelled.
    public func run(every interval: Duration = .seconds(3600)) async {
        while !Task.isCancelled {
            await refresh()
            do {
                try await Task.sleep(for: wait(upTo: interval, now: Date()))
            } catch {
                return
            }
        }
    }

    /// `interval`, or less: the time left until the bundle in force expires (a millisecond at least, since the
    /// sleep's clock and `Date` may disagree by a little).
    func wait(upTo interval: Duration, now: Date) -> Duration {
        guard case .bundle(_, let expires, _) = inForce else { return interval }
        let left = expires.timeIntervalSince(now)
        guard left < Double(interval.components.seconds) else { return interval }
        return max(.milliseconds(1), .milliseconds(Int64(max(0, left) * 1000) + 1))
    }

    /// Shuts the fetching session down.
    public func shutdown() async {
        await session.shutdown()
    }

    func fetchAndAccept(now: Date) async -> Event {
        async let bundle = get(source.bundleURL, what: "bundle", limit: limits.maximumBundleSize)
        async let signature = get(source.signatureURL, what: "signature", limit: limits.maximumSignatureSize)
        switch (await bundle, await signature) {
        case (.success(let bundle), .success(let signature)):
            return await accept(bundle, signature: signature, now: now)
        case (.failure(let rejection), _), (_, .failure(let rejection)):
            return await refused(rejection, now: now)
        }
    }

    /// Verifies, records, installs.
    func accept(_ bundle: [UInt8], signature: [UInt8], now: Date) async -> Event {
        // The very bundle accepted last (a restart, or the same file fetched again) is no rollback.
        let digest = Array(SHA256.hash(data: bundle))
        let isLastAccepted = lastAccepted?.digest == digest
        do throws(TrustConfigurationRejection) {
            let verified = try SignedTrustConfiguration.verify(
                bundle: bundle, signature: signature, trustedKeys: trustedKeys, lastAcceptedSequence: isLastAccepted ? nil : lastAccepted?.sequence,
                now: now, maximumSize: limits.maximumBundleSize)
            let record = AcceptedBundleRecord(sequence: verified.sequence, digest: verified.digest)
            if case .bundle(_, _, let current) = inForce, current == verified.digest { return report(.unchanged(sequence: verified.sequence)) }
            // Recorded before it is used: a bundle in force is never one a restart would let an older one replace.
            // Another updater may have recorded a later one in the same file since this one read it.
            if !isLastAccepted, let later = try AcceptedBundleRecord.advance(stateFile, to: record) {
                lastAccepted = later
                throw .rollback(sequence: verified.sequence, lastAccepted: later.sequence)
            }
            lastAccepted = record
            try await install(verified.configuration)
            inForce = .bundle(sequence: verified.sequence, expires: verified.expires, digest: verified.digest)
            return report(.installed(sequence: verified.sequence, expires: verified.expires, signedBy: verified.signedBy.id))
        } catch {
            return await refused(error, now: now)
        }
    }

    /// Reports a refusal; an expired bundle (fetched, or in force) puts the built-in configuration in force.
    func refused(_ rejection: TrustConfigurationRejection, now: Date) async -> Event {
        var reason = rejection
        if case .bundle(_, let expires, _) = inForce, now >= expires { reason = .bundleExpired(expires: expires) }
        guard case .bundleExpired = reason.detail else { return report(.rejected(rejection)) }
        if reason != rejection { _ = report(.rejected(rejection)) }
        return await fallBack(reason)
    }

    /// Puts the built-in configuration in force; when it is refused, ``trustsNothing``: an expired bundle never
    /// stays in force (unless even that is refused, by an `install` closure of the application's).
    func fallBack(_ reason: TrustConfigurationRejection) async -> Event {
        switch inForce {
        case .builtIn: return report(.fellBackToBuiltIn(reason))
        case .closed(_, let builtInRefused): return report(.failedClosed(expired: reason, builtInRefused: builtInRefused))
        case .bundle: break
        }
        do throws(TrustConfigurationRejection) {
            try await fallback(builtIn)
            inForce = .builtIn
            return report(.fellBackToBuiltIn(reason))
        } catch {
            let builtInRefused = error
            do throws(TrustConfigurationRejection) {
                try await fallback(Self.trustsNothing)
            } catch {
                return report(.rejected(error))
            }
            inForce = .closed(expired: reason, builtInRefused: builtInRefused)
            return report(.failedClosed(expired: reason, builtInRefused: builtInRefused))
        }
    }

    func report(_ event: Event) -> Event {
        switch event {
        case .installed, .unchanged: logger?.info("\(event)")
        case .rejected, .fellBackToBuiltIn: logger?.warning("\(event)")
        case .failedClosed: logger?.error("\(event)")
        }
        onEvent?(event)
        return event
    }

    /// One fetch: status 200 and a body within `limit`, or why not.
    func get(_ url: URL, what: String, limit: Int) async -> Result<[UInt8], TrustConfigurationRejection> {
        var request = TrustHTTPClientRequest(url: url, timeout: limits.timeout)
        request.maximumResponseBodySize = limit
        do {
            let response = try await session.data(for: request)
            guard response.statusCode == 200 else { return .failure(.fetchFailed(reason: "the \(what) was answered with HTTP status \(response.statusCode)")) }
            return .success(Array(response.body.readableBytesView))
        } catch let error as TrustHTTPClientError {
            return .failure(.fetchFailed(reason: "the \(what): \(error)"))
        } catch {
            return .failure(.fetchFailed(reason: "the \(what): \(DisplayText.escaped(String(describing: error)))"))
        }
    }
}

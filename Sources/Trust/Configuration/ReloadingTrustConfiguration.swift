#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A trust configuration that can be replaced while the process runs: a pin rotated, an anchor added, without a
/// restart. It reads its file again (``reload()``, ``poll()``, ``run()``: the ``Reloading`` shape) or takes a
/// configuration from another source (``apply(_:baseDirectory:allowingLockout:)``, a signed bundle fetched over HTTPS), checks it
/// completely, and swaps it in at once: every evaluation that starts after the swap uses it.
///
/// A new configuration is refused, and the one in force stays, when it is unreadable, malformed (every problem
/// the loader or ``ConfiguredTrustEvaluator`` finds), holds a pin set that has already expired, or would lock the
/// process out of a host it trusts now: for each host this type has trusted, it keeps the SPKI pins of the
/// validated path of the host's last trusted evaluation, and an enforced pin set that contains none of them is
/// refused unless the entry says `"allowLockout": true` (``TrustConfiguration/Entry/allowLockout``). Each refusal
/// is a typed ``TrustConfigurationRejection``: the outcome's, ``lastRejection``, and the observers' (``observe(_:)``,
/// ``Reloading/events()``).
///
/// Decisions are cached per configuration: each one put in force comes with an empty ``TrustEvaluationCache``
/// (the stricter of `evaluationCacheSettings` and the file's `evaluationCache`), so a decision reached under an
/// earlier configuration is never given out after a swap — an evaluation that ends after it stores into the cache
/// of the configuration it ran under, which is no longer asked.
public final class ReloadingTrustConfiguration: ImmediateTrustEvaluator, TrustConfigurationEvaluator, Reloading, Sendable {
    /// What a reload did.
    public typealias Outcome = ReloadOutcome<TrustConfigurationRejection>
    /// What observers are told: a configuration put in force (its evaluator), or one refused.
    public typealias Event = ReloadEvent<ConfiguredTrustEvaluator, TrustConfigurationRejection>

    /// An evaluation with the generation of the configuration that made it.
    package struct Evaluation: Sendable {
        /// The generation of the configuration the decision was made under (1: the first).
        package var generation: UInt64
        /// Whether the decision came from that configuration's cache (no evaluation ran, no report due).
        package var cached: Bool
        /// The decision, the entry that matched, warnings and the pin-failure report due.
        package var evaluation: ConfiguredTrustEvaluator.Evaluation
        /// The decision.
        package var decision: TrustDecision { evaluation.decision }
    }

    /// The configuration in force, with its generation and the cache of its decisions.
    struct Snapshot: Sendable {
        var generation: UInt64
        var evaluator: ConfiguredTrustEvaluator
        var cache: TrustEvaluationCache?
    }

    private struct State {
        var snapshot: Snapshot
        /// The file's stamp and the SHA-256 of its contents when it was last read, and of the contents in force.
        var stamp: FileFingerprint?
        var digestSeen: [UInt8]?
        var digestInForce: [UInt8]?
        /// Per host (canonical name): the SPKI pins on the validated path of its last trusted evaluation.
        var trustedPins: [String: Set<SPKIPin>] = [:]
        /// How many times the file was read (for tests: a poll that trusts the stamp reads nothing).
        var reads = 0
        /// Why the configuration last offered was refused; nil once one is put in force.
        var lastRejection: TrustConfigurationRejection?
    }

    /// Hosts whose last trusted path is remembered; beyond it one of them (not chosen) is forgotten for each new one.
    static let trackedHosts = 4096

    /// The configuration file (nil: configurations come only through ``apply(_:baseDirectory:allowingLockout:)``).
    public let path: String?
    /// Where relative paths in a configuration are read from (the file's folder by default).
    package let baseDirectory: String
    /// The cache settings the file's own `evaluationCache` is combined with (the stricter wins); nil: no cache.
    package let evaluationCacheSettings: EvaluationCacheSettings?
    /// For refusing host patterns on public suffixes (see ``TrustConfiguration/parse(_:publicSuffixes:)``).
    package let publicSuffixes: PublicSuffixList?
    /// How often ``run()`` polls the file.
    public let pollInterval: Duration
    private let now: @Sendable () -> Date
    private let state: LockedState<State>
    private let observers = ObserverList<Event>()
    /// Held while a configuration is checked and swapped in, and its event sent: offers are taken one at a time,
    /// in order (recursive, so an observer may offer another).
    private let updating = Lock(recursive: true)

    /// Reads and checks the configuration file at `path` and puts it in force as generation 1.
    /// - Parameters:
    ///   - path: the configuration file (see ``TrustConfiguration``); relative anchor paths are read from its folder.
    ///   - evaluationCache: the cache of each configuration's decisions, combined with the file's `evaluationCache`.
    ///   - publicSuffixes: for refusing host patterns on public suffixes.
    ///   - pollInterval: how often ``run()`` polls the file (5 s by default).
    ///   - now: the clock pin-set expiry is checked against.
    public init(
        contentsOf path: String, evaluationCache: EvaluationCacheSettings? = EvaluationCacheSettings(),
        publicSuffixes: PublicSuffixList? = PublicSuffixList.shared,
        pollInterval: Duration = .seconds(5), now: @escaping @Sendable () -> Date = { Date() }
    ) throws(TrustConfigurationRejection) {
        self.pollInterval = pollInterval
        let folder = path.parentPath
        self.path = path
        self.baseDirectory = folder.isEmpty ? "." : folder
        self.evaluationCacheSettings = evaluationCache
        self.publicSuffixes = publicSuffixes
        self.now = now
        let stamp = FileFingerprint(paths: [path], now: now())
        let bytes = try Self.read(path)
        let configuration = try Self.parse(bytes, publicSuffixes: publicSuffixes)
        let evaluator = try Self.check(configuration, baseDirectory: baseDirectory, trustedPins: [:], at: now())
        let digest = FileFingerprint.digest([bytes])
        state = LockedState(
            State(
                snapshot: Self.snapshot(evaluator, generation: 1, settings: evaluationCache), stamp: stamp, digestSeen: digest,
                digestInForce: digest))
    }

    /// Checks `configuration` and puts it in force as generation 1; later ones come through ``apply(_:baseDirectory:allowingLockout:)``.
    public init(
        configuration: TrustConfiguration, baseDirectory: String = FileManager.default.currentDirectoryPath,
        evaluationCache: EvaluationCacheSettings? = EvaluationCacheSettings(), publicSuffixes: PublicSuffixList? = PublicSuffixList.shared,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(TrustConfigurationRejection) {
        self.pollInterval = .seconds(5)
        self.path = nil
        self.baseDirectory = baseDirectory
        self.evaluationCacheSettings = evaluationCache
        self.publicSuffixes = publicSuffixes
        self.now = now
        let evaluator = try Self.check(configuration, baseDirectory: baseDirectory, trustedPins: [:], at: now())
        state = LockedState(State(snapshot: Self.snapshot(evaluator, generation: 1, settings: evaluationCache)))
    }

    // MARK: The configuration in force

    /// The evaluator of the configuration in force.
    public var current: ConfiguredTrustEvaluator { snapshot.evaluator }
    /// The generation of the configuration in force: 1 for the first, one more for each swap.
    public var generation: UInt64 { snapshot.generation }
    var snapshot: Snapshot { state.withLock { $0.snapshot } }

    /// The hosts this configuration has trusted, with the SPKI pins on the path each presented last (what a new
    /// pin set is checked against).
    package var trustedHostPins: [String: Set<SPKIPin>] { state.withLock { $0.trustedPins } }
    /// How many times the file has been read since this configuration was made (the first read not counted).
    var fileReads: Int { state.withLock { $0.reads } }

    // MARK: Offering a configuration

    /// Reads the file now, whatever its stamp, and puts it in force if it differs from the one in force (its
    /// SHA-256) and passes every check; a refusal keeps the configuration in force (``lastRejection``).
    @discardableResult
    public func reload() -> Outcome {
        outcome { () throws(TrustConfigurationRejection) in try offerFile(force: false) }
    }

    /// ``reload()``, and with `force` the file is put in force even unchanged (anchor or CRL files it names were
    /// replaced).
    @discardableResult
    public func reload(force: Bool) -> Outcome {
        outcome { () throws(TrustConfigurationRejection) in try offerFile(force: force) }
    }

    /// Why the configuration last offered (by a reload, a poll or ``apply(_:baseDirectory:allowingLockout:)``) was
    /// refused; nil once one is put in force.
    public var lastRejection: TrustConfigurationRejection? { state.withLock { $0.lastRejection } }

    /// The outcome of an offer that returns the generation it put in force (nil: nothing was offered).
    private func outcome(_ body: () throws(TrustConfigurationRejection) -> UInt64?) -> Outcome {
        do {
            return try body().map { .reloaded(generation: $0) } ?? .unchanged
        } catch {
            return .rejected(error)
        }
    }

    private func offerFile(force: Bool) throws(TrustConfigurationRejection) -> UInt64? {
        updating.lock()
        defer { updating.unlock() }
        guard let path else {
            throw report(.unreadable(path: "", reason: "this configuration has no file: configurations are offered with apply(_:baseDirectory:)"))
        }
        let stamp = FileFingerprint(paths: [path], now: now())
        state.withLock { $0.stamp = stamp }
        let bytes = try readReporting(path)
        let digest = FileFingerprint.digest([bytes])
        let unchanged = state.withLock { state in
            state.digestSeen = digest
            return state.digestInForce == digest
        }
        if unchanged && !force { return nil }
        return try offer(bytes, digest: digest)
    }

    /// What ``run()`` does at each tick: reads the file only when its stamp (modification time,
    /// size, inode, mode, owner: a `chmod 600` after a refusal as writable by others counts) moved or was too recent to tell a same-second rewrite, and offers it only when its contents differ
    /// from the last looked at — a file touched but not changed is no change, and contents already refused (or a
    /// file still missing) are not refused again at every tick.
    @discardableResult
    public func poll() -> Outcome {
        outcome { () throws(TrustConfigurationRejection) in try offerFileIfChanged() }
    }

    private func offerFileIfChanged() throws(TrustConfigurationRejection) -> UInt64? {
        guard let path else { return nil }
        updating.lock()
        defer { updating.unlock() }
        let stamp = FileFingerprint(paths: [path], now: now())
        let previous = state.withLock { state in
            defer { state.stamp = stamp }
            return state.stamp
        }
        if let previous, !previous.mayDiffer(from: stamp) { return nil }
        let bytes = try readReporting(path)
        let digest = FileFingerprint.digest([bytes])
        let seen = state.withLock { state in
            defer { state.digestSeen = digest }
            return state.digestSeen == digest
        }
        if seen { return nil }
        return try offer(bytes, digest: digest)
    }

    private func readReporting(_ path: String) throws(TrustConfigurationRejection) -> [UInt8] {
        state.withLock { $0.reads += 1 }
        do {
            return try Self.read(path)
        } catch {
            throw report(error)
        }
    }

    /// The generation `bytes` were put in force as.
    private func offer(_ bytes: [UInt8], digest: [UInt8]) throws(TrustConfigurationRejection) -> UInt64 {
        let configuration: TrustConfiguration
        do {
            configuration = try Self.parse(bytes, publicSuffixes: publicSuffixes)
        } catch {
            throw report(error)
        }
        return try apply(configuration, baseDirectory: baseDirectory, digest: digest)
    }

    /// Puts `configuration` in force if it passes every check (for configurations from another source: a
    /// signed bundle fetched over HTTPS).
    /// - Parameters:
    ///   - configuration: the configuration offered.
    ///   - baseDirectory: where its relative paths are read from (nil: `baseDirectory`).
    ///   - allowingLockout: skip the lock-out check, for a configuration that must not be held back (the built-in
    ///     one, back in force when a signed bundle expires); the hosts it locks out are no longer trusted.
    /// - Throws: why it was refused; the configuration in force stays.
    public func apply(
        _ configuration: TrustConfiguration, baseDirectory: String? = nil, allowingLockout: Bool = false
    ) throws(TrustConfigurationRejection) {
        updating.lock()
        defer { updating.unlock() }
        _ = try apply(configuration, baseDirectory: baseDirectory ?? self.baseDirectory, digest: nil, allowingLockout: allowingLockout)
    }

    /// Polls the file every ``pollInterval`` (see ``poll()``) until the task is cancelled; refusals go to the
    /// observers, and the configuration in force stays.
    public func run() async {
        await pollInterval.repeatUntilCancelled { _ = poll() }
    }

    private func apply(
        _ configuration: TrustConfiguration, baseDirectory: String, digest: [UInt8]?, allowingLockout: Bool = false
    ) throws(TrustConfigurationRejection) -> UInt64 {
        let pins = trustedHostPins
        let evaluator: ConfiguredTrustEvaluator
        do {
            evaluator = try Self.check(configuration, baseDirectory: baseDirectory, trustedPins: allowingLockout ? [:] : pins, at: now())
        } catch {
            throw report(error)
        }
        let generation = state.withLock { state in
            let generation = state.snapshot.generation + 1
            state.snapshot = Self.snapshot(evaluator, generation: generation, settings: evaluationCacheSettings)
            if let digest { state.digestInForce = digest }
            state.lastRejection = nil
            // Hosts an entry let lock out are no longer trusted: they no longer hold the next configuration back.
            for host in Self.lockedOut(pins, by: evaluator, at: now()) { state.trustedPins[host] = nil }
            return generation
        }
        send(.reloaded(generation: generation, value: evaluator))
        return generation
    }

    // MARK: Evaluating

    /// The evaluation of `trust` under the configuration in force: from its cache, else evaluated (and stored).
    /// - Parameters:
    ///   - trust: the chain, the peer name and the time.
    ///   - port: the connection's port (pin-failure reports name it).
    ///   - entryName: the name that chooses the entry when `trust` has none (see
    ///     ``ConfiguredTrustEvaluator/evaluation(for:port:entryName:)``).
    package func evaluation(for trust: ServerTrust, port: Int = 443, entryName: PeerName? = nil) async -> Evaluation {
        let snapshot = self.snapshot
        let policy = Self.cachePolicy(trust, entryName: entryName)
        if let cached = snapshot.cache?.decision(for: trust, policy: policy) {
            let entry = snapshot.evaluator.resolved(for: trust.peerName ?? entryName).entry
            let evaluation = ConfiguredTrustEvaluator.Evaluation(
                decision: cached, matched: entry.host, warnings: [], report: nil, reportURIs: entry.reportURIs)
            return Evaluation(generation: snapshot.generation, cached: true, evaluation: evaluation)
        }
        let evaluation = await snapshot.evaluator.evaluation(for: trust, port: port, entryName: entryName)
        snapshot.cache?.store(evaluation.decision, for: trust, policy: policy)
        remember(evaluation.decision, host: trust.peerName ?? entryName, generation: snapshot.generation)
        return Evaluation(generation: snapshot.generation, cached: false, evaluation: evaluation)
    }

    /// The decision for `trust` under the configuration in force.
    public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        await evaluation(for: trust).decision
    }

    /// ``evaluation(for:port:entryName:)``'s evaluation, without its generation.
    package func configuredEvaluation(of trust: ServerTrust, port: Int) async -> ConfiguredTrustEvaluator.Evaluation {
        await evaluation(for: trust, port: port).evaluation
    }

    /// `nil`: each configuration put in force caches its own decisions (with the settings this was made with, and
    /// the file's), so that no decision outlives the configuration that made it.
    package func userCacheSettings(_ settings: EvaluationCacheSettings?) -> EvaluationCacheSettings? { nil }

    /// The cached decision of the configuration in force, when it has one for `trust`.
    public func decisionWithoutSuspending(_ trust: ServerTrust) -> TrustDecision? {
        snapshot.cache?.decision(for: trust, policy: Self.cachePolicy(trust, entryName: nil))
    }

    // MARK: Observing

    /// Calls `handler` with every swap and refusal, in order, on the thread that offered the configuration, until
    /// ``removeObserver(_:)``. Keep it quick.
    @discardableResult
    public func observe(_ handler: @escaping @Sendable (Event) -> Void) -> ReloadObservation {
        ReloadObservation(id: observers.add(handler))
    }

    /// Ends an observation.
    public func removeObserver(_ observation: ReloadObservation) {
        observers.remove(observation.id)
    }

    // MARK: Checks

    /// Every check a configuration passes before it is put in force; its evaluator.
    static func check(
        _ configuration: TrustConfiguration, baseDirectory: String, trustedPins: [String: Set<SPKIPin>], at time: Date
    ) throws(TrustConfigurationRejection) -> ConfiguredTrustEvaluator {
        let evaluator: ConfiguredTrustEvaluator
        do {
            evaluator = try ConfiguredTrustEvaluator(configuration: configuration, baseDirectory: baseDirectory)
        } catch {
            throw .malformed(error)
        }
        for entry in [configuration.base] + configuration.hosts {
            if let expires = entry.pins?.expires, time >= expires {
                throw .pinsExpired(host: entry.host?.description ?? "base", expires: expires)
            }
        }
        for (host, onPath) in trustedPins.sorted(by: { $0.key < $1.key }) {
            let entry = evaluator.entry(for: host)
            guard let pins = Self.enforcedPins(entry, at: time), !entry.allowLockout, pins.isDisjoint(with: onPath) else { continue }
            throw .wouldLockOut(host: host, pinsOnPath: onPath.sorted { $0.base64 < $1.base64 }, newPins: entry.pins?.sha256 ?? [])
        }
        return evaluator
    }

    /// The hosts of `trustedPins` whose entry in `evaluator` enforces pins none of their path's keys match.
    private static func lockedOut(_ trustedPins: [String: Set<SPKIPin>], by evaluator: ConfiguredTrustEvaluator, at time: Date) -> [String] {
        trustedPins.compactMap { host, onPath in
            guard let pins = enforcedPins(evaluator.entry(for: host), at: time), pins.isDisjoint(with: onPath) else { return nil }
            return host
        }
    }

    /// The pins `entry` enforces at `time` (nil: none — no pins, report-only, or expired).
    private static func enforcedPins(_ entry: TrustConfiguration.Entry, at time: Date) -> Set<SPKIPin>? {
        guard let pins = entry.pins, entry.mode == .enforce, !pins.isExpired(at: time) else { return nil }
        return Set(pins.sha256)
    }

    // MARK: Helpers

    private static func snapshot(_ evaluator: ConfiguredTrustEvaluator, generation: UInt64, settings: EvaluationCacheSettings?) -> Snapshot {
        let cache = EvaluationCacheSettings.stricter(settings, evaluator.configuration.evaluationCache).map(TrustEvaluationCache.init)
        return Snapshot(generation: generation, evaluator: evaluator, cache: cache)
    }

    /// The cache's policy name: with no peer name (the name check off), the name that chose the entry is part of it.
    private static func cachePolicy(_ trust: ServerTrust, entryName: PeerName?) -> String {
        guard trust.peerName == nil, let entryName else { return "configuration" }
        return "configuration entry:" + entryName.description
    }

    private static func read(_ path: String) throws(TrustConfigurationRejection) -> [UInt8] {
        do {
            return try LocalFile.read(path, limit: LocalFile.configurationLimit, ownership: .ownerOnlyWritable)
        } catch {
            throw .unreadable(path: path, reason: error.reason)
        }
    }

    private static func parse(
        _ bytes: [UInt8], publicSuffixes: PublicSuffixList?
    ) throws(TrustConfigurationRejection) -> TrustConfiguration {
        guard let text = String(data: Data(bytes), encoding: .utf8) else {
            throw .malformed(TrustConfigurationFileError(problems: [TrustConfigurationProblem(path: "$", message: "the file is not UTF-8 text")]))
        }
        do {
            return try TrustConfiguration.parse(text, publicSuffixes: publicSuffixes)
        } catch {
            throw .malformed(error)
        }
    }

    /// Keeps the pins of a trusted decision's validated path as what `host` presents now — only while the
    /// configuration the decision was made under (`generation`) is in force: an evaluation that ends after a swap
    /// must not bring back the pins of a path the new configuration may have just let go.
    func remember(_ decision: TrustDecision, host: PeerName?, generation: UInt64) {
        guard decision.isTrusted, decision.override == nil, !decision.validatedPath.isEmpty, let host else { return }
        let pins = Set(decision.validatedPath.map(\.spkiPin))
        let name = host.description
        state.withLock { state in
            guard state.snapshot.generation == generation else { return }
            // Beyond the bound, one host (whichever the dictionary gives first, not the oldest) is forgotten.
            if state.trustedPins[name] == nil, state.trustedPins.count >= Self.trackedHosts, let first = state.trustedPins.keys.first {
                state.trustedPins[first] = nil
            }
            state.trustedPins[name] = pins
        }
    }

    /// Sends `rejection` to the observers and returns it, to throw.
    private func report(_ rejection: TrustConfigurationRejection) -> TrustConfigurationRejection {
        state.withLock { $0.lastRejection = rejection }
        send(.rejected(rejection))
        return rejection
    }

    private func send(_ event: Event) {
        observers.notify(event)
    }
}

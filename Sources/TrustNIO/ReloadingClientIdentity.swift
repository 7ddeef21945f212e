import Foundation
import NIOConcurrencyHelpers
import Trust

/// A ``ClientIdentity`` that follows its files: a PKCS#12 file and its passphrase, or a PEM certificate chain and
/// key, read again when they change, so that a certificate renewed on disk is presented without a restart.
///
/// ```swift
/// let identity = try ReloadingClientIdentity(.pem(certificateChain: "/etc/app/client.pem", key: "/etc/app/client.key"))
/// identity.startPolling()                                   // or `try await identity.run()` in a task of your own
/// configuration.defaultReloadingClientIdentity = identity   // TrustHTTP: new connections present the identity in force
/// ```
///
/// Each poll (every ``pollInterval``) takes the files' `stat(2)` stamps; only when one moved are the files read,
/// and only when the SHA-256 of their bytes differs from the identity in force is a new one loaded.
/// ``reload()`` reads and compares the bytes whatever their stamps. A new identity is taken
/// only if it loads, its key belongs to its certificate and the certificate is within its validity period; else the
/// identity in force stays, and the reason is kept (``lastRejection``) and given to observers as a
/// ``ReloadingClientIdentityError`` — which names files, never a passphrase or a key. Files rejected once are not
/// loaded again until they change (but for a certificate not yet valid, tried at each poll).
///
/// Writing files in place can be seen half-done (a new certificate with the old key): rejected, the identity in
/// force stays, and the next poll takes the pair once both are written. Renaming a complete file into place is
/// atomic (`rename(2)`).
///
/// Loading a PKCS#12 file runs its key derivation (within its ``PKCS12Budget``) on the calling thread's behalf:
/// a reload waits for it, a poll whose files did not change does not.
public final class ReloadingClientIdentity: Sendable {
    /// The files an identity is read from.
    public enum Files: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
        /// A PKCS#12 file and its passphrase.
        case pkcs12(path: String, passphrase: Passphrase = .empty)
        /// A PEM certificate chain (leaf first) and its private key (PKCS#8, SEC1 or PKCS#1; nil: in the chain's
        /// file), the key encrypted or not.
        case pem(certificateChain: String, key: String? = nil, passphrase: Passphrase = .empty)

        /// The files read, the main one first (the passphrase's file too, when it is one).
        public var paths: [String] {
            switch self {
            case .pkcs12(let path, let passphrase): return [path] + passphrase.paths
            case .pem(let chain, let key, let passphrase): return [chain] + (key.map { [$0] } ?? []) + passphrase.paths
            }
        }

        /// The files, named (escaped, ``DisplayText``); never a passphrase.
        public var description: String { paths.map { DisplayText.escaped($0) }.joined(separator: ", ") }

        /// Only ``description``: `dump` and debuggers never show a passphrase given in code.
        public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
    }

    /// Where a passphrase comes from, read again at each load (a rotated file may come with a new passphrase).
    public enum Passphrase: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
        /// None: an empty passphrase for a PKCS#12 file, an unencrypted PEM key.
        case empty
        /// This one.
        case value(String)
        /// The environment variable of this name, as the process has it at each load.
        case environment(String)
        /// The first line of this file, as OpenSSL reads `-passin file:PATH`; the file is watched with the others.
        case file(String)

        var paths: [String] {
            if case .file(let path) = self { return [path] }
            return []
        }

        /// Where the passphrase comes from; never the passphrase.
        public var description: String {
            switch self {
            case .empty: return "no passphrase"
            case .value: return "a passphrase given in code"
            case .environment(let name): return "the environment variable \(DisplayText.escaped(name))"
            case .file(let path): return "the file \(DisplayText.escaped(path))"
            }
        }

        /// Only ``description``: `dump` and debuggers never show the passphrase.
        public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
    }

    /// What a reload did.
    public enum Outcome: Sendable, Hashable {
        /// The files hold the identity in force (or the files last rejected): nothing changed.
        case unchanged
        /// A new identity is in force, under this generation.
        case reloaded(generation: UInt64)
        /// The files changed but cannot be used: the identity in force stays.
        case rejected(ReloadingClientIdentityError)
    }

    /// What observers are told.
    public enum Event: Sendable {
        /// A new identity is in force, under this generation.
        case reloaded(generation: UInt64, identity: ClientIdentity)
        /// The files changed but cannot be used: the identity in force stays.
        case rejected(ReloadingClientIdentityError)
    }

    /// An observer's registration (``observe(_:)``), to end it with ``removeObserver(_:)``.
    public struct Observation: Sendable, Hashable {
        let id: Int
    }

    private struct State {
        var identity: ClientIdentity
        var generation: UInt64
        var digest: [UInt8]
        var fingerprint: FileFingerprint
        /// The bytes last rejected, and why.
        var rejected: (digest: [UInt8], error: ReloadingClientIdentityError)?
        var poller: Task<Void, Never>?
    }

    /// The files.
    public let files: Files
    /// How often ``run()`` and ``startPolling()`` look at the files.
    public let pollInterval: Duration
    /// The budget of each PKCS#12 load.
    public let budget: PKCS12Budget
    private let state: NIOLockedValueBox<State>
    private let observers = ObserverList<Event>()
    /// Held through a whole load: one reload at a time (the state's lock is never held while loading).
    private let loading = NIOLock()

    /// Loads the identity from `files` now.
    /// - Parameters:
    ///   - files: the PKCS#12 file or the PEM files, and the passphrase's source.
    ///   - pollInterval: how often ``run()`` and ``startPolling()`` look at the files (30 s by default).
    ///   - budget: the bounds of each PKCS#12 load (``PKCS12Budget``).
    /// - Throws: why the files cannot be used (there is no identity to keep).
    public init(_ files: Files, pollInterval: Duration = .seconds(30), budget: PKCS12Budget = PKCS12Budget()) throws(ReloadingClientIdentityError) {
        self.files = files
        self.pollInterval = pollInterval
        self.budget = budget
        let fingerprint = FileFingerprint(paths: files.paths)
        let (contents, digest) = try Self.read(files)
        let identity = try Self.load(files, contents: contents, budget: budget)
        state = NIOLockedValueBox(State(identity: identity, generation: 1, digest: digest, fingerprint: fingerprint))
    }

    /// The identity in force.
    public var current: ClientIdentity { state.withLockedValue { $0.identity } }

    /// The identity in force's generation: 1 for the first, one more at each identity taken.
    public var generation: UInt64 { state.withLockedValue { $0.generation } }

    /// Why the files last read were not taken, while they stay as they are; nil once an identity is taken.
    public var lastRejection: ReloadingClientIdentityError? { state.withLockedValue { $0.rejected?.error } }

    /// Calls `observer` after each identity taken and each change rejected (on the thread that reloaded: keep it quick).
    @discardableResult
    public func observe(_ observer: @escaping @Sendable (Event) -> Void) -> Observation {
        Observation(id: observers.add(observer))
    }

    /// Ends an observer's calls.
    public func removeObserver(_ observation: Observation) {
        observers.remove(observation.id)
    }

    /// Reads the files now, whatever their stamps, and takes the identity they hold if it differs from the one in
    /// force and can be used.
    @discardableResult
    public func reload() -> Outcome {
        tellObservers(loading.withLock { load(FileFingerprint(paths: files.paths), retryingRejected: true) })
    }

    /// Looks at the files' stamps and reloads only when they may have changed: what each
    /// tick of ``run()`` does.
    @discardableResult
    public func poll() -> Outcome {
        let loaded = loading.withLock { () -> (Outcome, Event?) in
            let now = FileFingerprint(paths: files.paths)
            let (before, retry) = state.withLockedValue { ($0.fingerprint, $0.rejected?.error.dependsOnTime == true) }
            guard retry || before.mayDiffer(from: now) else { return (.unchanged, nil) }
            return load(now, retryingRejected: retry)
        }
        return tellObservers(loaded)
    }

    /// Calls the observers with `loaded`'s event, once `loading` is released (an observer may reload or poll), and
    /// returns its outcome.
    private func tellObservers(_ loaded: (outcome: Outcome, event: Event?)) -> Outcome {
        if let event = loaded.event {
            observers.notify(event)
        }
        return loaded.outcome
    }

    /// Polls every ``pollInterval`` until the calling task is cancelled (as a `swift-service-lifecycle` service's
    /// `run()` would).
    public func run() async {
        await pollInterval.repeatUntilCancelled { poll() }
    }

    /// Polls every ``pollInterval`` in a task of the identity's own, until ``stopPolling()``; does nothing if it
    /// already polls. The task holds the identity weakly: one no longer used stops.
    public func startPolling() {
        state.withLockedValue { state in
            guard state.poller == nil else { return }
            let interval = pollInterval
            state.poller = Task { [weak self] in
                while !Task.isCancelled {
                    do {
                        try await Task.sleep(for: interval)
                    } catch {
                        return
                    }
                    guard let self else { return }
                    self.poll()
                }
            }
        }
    }

    /// Stops the polling ``startPolling()`` started.
    public func stopPolling() {
        let poller = state.withLockedValue { state in
            defer { state.poller = nil }
            return state.poller
        }
        poller?.cancel()
    }

    deinit {
        state.withLockedValue { $0.poller?.cancel() }
    }

    /// Loads the files as they are (`fingerprint` taken before they were read), under `loading`; the event is for
    /// the observers, called once `loading` is released.
    private func load(_ fingerprint: FileFingerprint, retryingRejected: Bool) -> (Outcome, Event?) {
        let outcome: Outcome
        let event: Event?
        do throws(ReloadingClientIdentityError) {
            let (contents, digest) = try Self.read(files)
            let (known, rejected) = state.withLockedValue { ($0.digest, $0.rejected) }
            if digest == known {
                state.withLockedValue {
                    $0.fingerprint = fingerprint
                    $0.rejected = nil
                }
                return (.unchanged, nil)
            }
            if !retryingRejected, let rejected, rejected.digest == digest {
                state.withLockedValue { $0.fingerprint = fingerprint }
                return (.unchanged, nil)
            }
            do throws(ReloadingClientIdentityError) {
                let identity = try Self.load(files, contents: contents, budget: budget)
                let generation = state.withLockedValue { state in
                    state.generation += 1
                    (state.identity, state.digest, state.fingerprint, state.rejected) = (identity, digest, fingerprint, nil)
                    return state.generation
                }
                (outcome, event) = (.reloaded(generation: generation), .reloaded(generation: generation, identity: identity))
            } catch {
                (outcome, event) = (.rejected(error), reject(error, digest: digest, fingerprint: fingerprint))
            }
        } catch {
            // Unreadable: nothing to compare; the next poll tries again once a stamp moves.
            (outcome, event) = (.rejected(error), reject(error, digest: [], fingerprint: fingerprint))
        }
        return (outcome, event)
    }

    /// Keeps the rejection; the event for observers, unless they were told the same of the same bytes (a
    /// certificate not yet valid, tried at each poll).
    private func reject(_ error: ReloadingClientIdentityError, digest: [UInt8], fingerprint: FileFingerprint) -> Event? {
        state.withLockedValue { state in
            let told = state.rejected.map { $0.digest == digest && $0.error == error } ?? false
            (state.fingerprint, state.rejected) = (fingerprint, (digest, error))
            return told ? nil : .rejected(error)
        }
    }

    /// The files' bytes (the passphrase's, when it is read from a file or the environment, among them) and their digest.
    static func read(_ files: Files) throws(ReloadingClientIdentityError) -> (contents: [[UInt8]], digest: [UInt8]) {
        var contents: [[UInt8]] = []
        switch files {
        case .pkcs12(let path, _):
            contents.append(try bytes(path))
        case .pem(let chain, let key, _):
            contents.append(try bytes(chain))
            if let key { contents.append(try bytes(key)) }
        }
        contents.append(Array((try passphrase(files)).utf8))
        return (contents, FileFingerprint.digest(contents))
    }

    private static func bytes(_ path: String) throws(ReloadingClientIdentityError) -> [UInt8] {
        do {
            return try LocalFile.read(path, limit: LocalFile.identityLimit)
        } catch {
            throw .unreadable(path: path)
        }
    }

    private static func passphrase(_ files: Files) throws(ReloadingClientIdentityError) -> String {
        let source: Passphrase
        switch files {
        case .pkcs12(_, let passphrase), .pem(_, _, let passphrase): source = passphrase
        }
        switch source {
        case .empty: return ""
        case .value(let value): return value
        case .environment(let name):
            guard let value = ProcessInfo.processInfo.environment[name] else { throw .passphraseUnavailable(source: "$" + name) }
            return value
        case .file(let path):
            guard let line = try? LocalFile.readFirstLine(path, limit: 4096) else { throw .passphraseUnavailable(source: path) }
            // A line ended by CR LF: the CR is not part of the passphrase.
            return String(decoding: line.last == 0x0D ? line.dropLast() : line[...], as: UTF8.self)
        }
    }

    /// The identity in `contents` (as ``read(_:)`` returned them), if it can be used now.
    static func load(_ files: Files, contents: [[UInt8]], budget: PKCS12Budget) throws(ReloadingClientIdentityError) -> ClientIdentity {
        let now = Date()
        let secret = String(decoding: contents[contents.count - 1], as: UTF8.self)
        let identity: ClientIdentity
        do {
            switch files {
            case .pkcs12(let path, _):
                identity = try ClientIdentity(pkcs12: contents[0], passphrase: secret, source: path, now: now, budget: budget)
            case .pem(let chain, let key, let passphrase):
                identity = try ClientIdentity(
                    certificateChainPEM: String(decoding: contents[0], as: UTF8.self),
                    privateKeyPEM: String(decoding: key == nil ? contents[0] : contents[1], as: UTF8.self),
                    passphrase: passphrase == .empty ? nil : secret, source: chain, now: now)
            }
        } catch {
            throw ReloadingClientIdentityError(error)
        }
        let main = files.paths[0]
        if identity.certificate.notValidAfter < now { throw .expired(path: main, notValidAfter: identity.certificate.notValidAfter) }
        if identity.certificate.notValidBefore > now { throw .notYetValid(path: main, notValidBefore: identity.certificate.notValidBefore) }
        return identity
    }
}

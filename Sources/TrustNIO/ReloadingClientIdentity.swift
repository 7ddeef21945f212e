import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
public final class ReloadingClientIdentity: Reloading, Sendable {
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

        /// The files, named (escaped, `DisplayText`); never a passphrase.
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
    public typealias Outcome = ReloadOutcome<ReloadingClientIdentityError>
    /// What observers are told: an identity taken, or changed files refused.
    public typealias Event = ReloadEvent<ClientIdentity, ReloadingClientIdentityError>

    /// The files.
    public let files: Files
    /// How often ``run()`` and ``startPolling()`` look at the files.
    public var pollInterval: Duration { reloading.pollInterval }
    /// The budget of each PKCS#12 load.
    public let budget: PKCS12Budget
    private let reloading: ReloadingValue<ClientIdentity, ReloadingClientIdentityError>

    /// Loads the identity from `files` now.
    /// - Parameters:
    ///   - files: the PKCS#12 file or the PEM files, and the passphrase's source.
    ///   - pollInterval: how often ``run()`` and ``startPolling()`` look at the files (30 s by default).
    ///   - budget: the bounds of each PKCS#12 load (``PKCS12Budget``).
    /// - Throws: why the files cannot be used (there is no identity to keep).
    public init(_ files: Files, pollInterval: Duration = .seconds(30), budget: PKCS12Budget = PKCS12Budget()) throws(ReloadingClientIdentityError) {
        self.files = files
        self.budget = budget
        reloading = try ReloadingValue(
            paths: files.paths, pollInterval: pollInterval, dependsOnTime: { $0.dependsOnTime },
            read: { () throws(ReloadingClientIdentityError) in try ReloadingClientIdentity.read(files) },
            make: { (contents, _) throws(ReloadingClientIdentityError) in try ReloadingClientIdentity.load(files, contents: contents, budget: budget) })
    }

    /// The identity in force.
    public var current: ClientIdentity { reloading.value }

    /// The identity in force's generation: 1 for the first, one more at each identity taken.
    public var generation: UInt64 { reloading.generation }

    /// Why the files last read were not taken, while they stay as they are; nil once an identity is taken.
    public var lastRejection: ReloadingClientIdentityError? { reloading.lastRejection }

    /// Calls `observer` after each identity taken and each change rejected (on the thread that reloaded: keep it quick).
    @discardableResult
    public func observe(_ observer: @escaping @Sendable (Event) -> Void) -> ReloadObservation {
        ReloadObservation(id: reloading.observe(observer))
    }

    /// Ends an observer's calls.
    public func removeObserver(_ observation: ReloadObservation) {
        reloading.removeObserver(observation.id)
    }

    /// Reads the files now, whatever their stamps, and takes the identity they hold if it differs from the one in
    /// force and can be used.
    @discardableResult
    public func reload() -> Outcome {
        reloading.reload()
    }

    /// Looks at the files' stamps and reloads only when they may have changed: what each
    /// tick of ``run()`` does.
    @discardableResult
    public func poll() -> Outcome {
        reloading.poll()
    }

    /// Polls every ``pollInterval`` until the calling task is cancelled (as a `swift-service-lifecycle` service's
    /// `run()` would).
    public func run() async {
        await reloading.run()
    }

    /// Polls every ``pollInterval`` in a task of the identity's own, until ``stopPolling()``; does nothing if it
    /// already polls. The task holds the identity weakly: one no longer used stops.
    public func startPolling() {
        reloading.startPolling()
    }

    /// Stops the polling ``startPolling()`` started.
    public func stopPolling() {
        reloading.stopPolling()
    }

    deinit {
        reloading.stopPolling()
    }

    /// The files' bytes, the passphrase's (when it is read from a file or the environment) last.
    static func read(_ files: Files) throws(ReloadingClientIdentityError) -> [[UInt8]] {
        var contents: [[UInt8]] = []
        switch files {
        case .pkcs12(let path, _):
            contents.append(try bytes(path))
        case .pem(let chain, let key, _):
            contents.append(try bytes(chain))
            if let key { contents.append(try bytes(key)) }
        }
        contents.append(Array((try passphrase(files)).utf8))
        return contents
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

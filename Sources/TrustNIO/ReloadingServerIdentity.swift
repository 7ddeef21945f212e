import Foundation
import NIOConcurrencyHelpers
import NIOSSL
import SwiftASN1
import Trust
import X509

/// A TLS server's certificate chain and key — and, with client authentication, the client CAs it accepts — that
/// follow their files: each connection accepted takes the `NIOSSLContext` in force, made once when the files
/// changed, so that a renewed certificate or a new client-CA bundle applies to new connections without a restart;
/// connections already open keep theirs.
///
/// ```swift
/// let identity = try ReloadingServerIdentity(
///     .init(certificateChain: "/etc/app/server.pem", key: "/etc/app/server.key", clientCAs: "/etc/app/client-cas.pem"),
///     clientAuthentication: ClientAuthentication(requirement: .required, anchors: [])) { $0.applicationProtocols = ["h2", "http/1.1"] }
/// // in the child-channel initialiser:
/// try channel.pipeline.syncOperations.addHandler(identity.makeServerHandler(record: record))
/// // in a task of its own:
/// await identity.run()
/// ```
///
/// Files are watched as a ``ReloadingClientIdentity``'s are (`stat(2)` stamps, then the SHA-256 of their bytes), and
/// a replacement is checked the same way — readable, the key belonging to the certificate, the certificate within
/// its validity period — plus a client-CA bundle holding at least one certificate, each of them parsable, and a
/// context NIOSSL accepts. With SPIFFE client authentication (``ClientAuthentication/spiffeBundles``) the bundles
/// are rebuilt from the client-CA file, each certificate in the trust domain of its SPIFFE ID, and every allowed
/// SPIFFE ID must keep its trust domain's bundle. A replacement that fails keeps the context in force; the reason is
/// a ``ReloadingServerIdentityError``, kept (``lastRejection``) and given to observers (``observe(_:)``).
public final class ReloadingServerIdentity: Sendable {
    /// The files a server identity is read from (PEM).
    public struct Files: Sendable, Hashable {
        /// The certificate chain, leaf first.
        public var certificateChain: String
        /// The private key (nil: in the chain's file).
        public var key: String?
        /// The client CAs, one or more PEM certificates: the anchors of the ``ClientAuthentication`` given (nil: its own).
        public var clientCAs: String?

        /// The files; `key` nil when the key is in the chain's file, `clientCAs` nil to keep the anchors given in code.
        public init(certificateChain: String, key: String? = nil, clientCAs: String? = nil) {
            self.certificateChain = certificateChain
            self.key = key
            self.clientCAs = clientCAs
        }

        var paths: [String] { [certificateChain] + (key.map { [$0] } ?? []) + (clientCAs.map { [$0] } ?? []) }
        var identity: ReloadingClientIdentity.Files { .pem(certificateChain: certificateChain, key: key) }
    }

    /// What a reload did.
    public enum Outcome: Sendable, Hashable {
        /// The files are those in force (or those last rejected): nothing changed.
        case unchanged
        /// A new context is in force, under this generation.
        case reloaded(generation: UInt64)
        /// The files changed but cannot be used: the context in force stays.
        case rejected(ReloadingServerIdentityError)
    }

    /// What observers are told.
    public enum Event: Sendable {
        /// A new context is in force.
        case reloaded(InForce)
        /// Changed files were refused (told once for the same reason); the context in force stays.
        case rejected(ReloadingServerIdentityError)
    }

    /// An observer's registration (``observe(_:)``), to end it with ``removeObserver(_:)``.
    public struct Observation: Sendable, Hashable {
        let id: Int
    }

    /// What new connections are set up with.
    public struct InForce: Sendable {
        /// The TLS context.
        public let context: NIOSSLContext
        /// The client-certificate requirements (with the client-CA file's anchors), if the server asks for one.
        public let clientAuthentication: ClientAuthentication?
        /// The leaf certificate presented.
        public let certificate: Certificate
        /// 1 for the first, one more at each context taken.
        public let generation: UInt64
    }

    private struct State {
        var inForce: InForce
        var digest: [UInt8]
        var fingerprint: FileFingerprint
        var rejected: (digest: [UInt8], error: ReloadingServerIdentityError)?
    }

    /// The files.
    public let files: Files
    /// How often ``run()`` looks at the files.
    public let pollInterval: Duration
    private let clientAuthentication: ClientAuthentication?
    private let configure: @Sendable (inout TLSConfiguration) -> Void
    private let state: NIOLockedValueBox<State>
    private let observers = ObserverList<Event>()
    private let loading = NIOLock()

    /// Loads the files and makes the first context now.
    /// - Parameters:
    ///   - files: the chain, the key and the client CAs.
    ///   - clientAuthentication: how client certificates are asked for and verified (its anchors replaced by the
    ///     client-CA file's, when there is one); nil: none asked for.
    ///   - pollInterval: how often ``run()`` looks at the files.
    ///   - configure: changes to the server configuration made from the chain and key (ALPN, TLS versions).
    /// - Throws: why the files cannot be used (there is no context to keep).
    public init(
        _ files: Files, clientAuthentication: ClientAuthentication? = nil, pollInterval: Duration = .seconds(30),
        configure: @escaping @Sendable (inout TLSConfiguration) -> Void = { _ in }
    ) throws(ReloadingServerIdentityError) {
        self.files = files
        self.clientAuthentication = clientAuthentication
        self.pollInterval = pollInterval
        self.configure = configure
        let fingerprint = FileFingerprint(paths: files.paths)
        let (inForce, digest) = try Self.make(files, clientAuthentication: clientAuthentication, configure: configure, generation: 1)
        state = NIOLockedValueBox(State(inForce: inForce, digest: digest, fingerprint: fingerprint))
    }

    /// The context, client authentication and certificate new connections are set up with.
    public var inForce: InForce { state.withLockedValue { $0.inForce } }

    /// Why the files last read were not taken, while they stay as they are; nil once a context is taken.
    public var lastRejection: ReloadingServerIdentityError? { state.withLockedValue { $0.rejected?.error } }

    /// Calls `observer` after each context taken and each change refused (on the thread that reloaded, once the
    /// reload is over: it may call ``reload()`` or ``poll()``; keep it quick).
    @discardableResult
    public func observe(_ observer: @escaping @Sendable (Event) -> Void) -> Observation {
        Observation(id: observers.add(observer))
    }

    /// Ends an observer's calls.
    public func removeObserver(_ observation: Observation) {
        observers.remove(observation.id)
    }

    /// The TLS handler for a connection accepted now: the context in force, with the client-certificate
    /// verification of ``ClientAuthentication`` when the server asks for one (its verdict in `record`).
    public func makeServerHandler(record: ClientAuthenticationRecord = ClientAuthenticationRecord()) -> NIOSSLServerHandler {
        let inForce = self.inForce
        guard let authentication = inForce.clientAuthentication else { return NIOSSLServerHandler(context: inForce.context) }
        return authentication.makeServerHandler(context: inForce.context, record: record)
    }

    /// Reads the files now, whatever their stamps, and takes them if they differ from those in force and can be used.
    @discardableResult
    public func reload() -> Outcome {
        tellObservers(loading.withLock { load(FileFingerprint(paths: files.paths)) })
    }

    /// Reloads only when the files' stamps say they may have changed: what each tick of ``run()`` does.
    @discardableResult
    public func poll() -> Outcome {
        let loaded = loading.withLock { () -> (Outcome, Event?) in
            let now = FileFingerprint(paths: files.paths)
            let (before, retry) = state.withLockedValue { ($0.fingerprint, $0.rejected?.error.dependsOnTime == true) }
            guard retry || before.mayDiffer(from: now) else { return (.unchanged, nil) }
            return load(now)
        }
        return tellObservers(loaded)
    }

    /// Calls the observers with `loaded`'s event, once `loading` is released, and returns its outcome.
    private func tellObservers(_ loaded: (outcome: Outcome, event: Event?)) -> Outcome {
        if let event = loaded.event {
            observers.notify(event)
        }
        return loaded.outcome
    }

    /// Polls every ``pollInterval`` until the calling task is cancelled.
    public func run() async {
        await pollInterval.repeatUntilCancelled { poll() }
    }

    /// Loads the files (under `loading`); the event is for the observers, called once `loading` is released.
    private func load(_ fingerprint: FileFingerprint) -> (Outcome, Event?) {
        let generation = state.withLockedValue { $0.inForce.generation } + 1
        do throws(ReloadingServerIdentityError) {
            let (inForce, digest) = try Self.make(files, clientAuthentication: clientAuthentication, configure: configure, generation: generation)
            return state.withLockedValue { state in
                state.fingerprint = fingerprint
                guard digest != state.digest else {
                    state.rejected = nil
                    return (.unchanged, nil)
                }
                (state.inForce, state.digest, state.rejected) = (inForce, digest, nil)
                return (.reloaded(generation: generation), .reloaded(inForce))
            }
        } catch {
            let told = state.withLockedValue { state in
                defer { (state.fingerprint, state.rejected) = (fingerprint, ([], error)) }
                return state.rejected?.error == error
            }
            return (.rejected(error), told ? nil : .rejected(error))
        }
    }

    /// The context the files make, and the digest of their bytes.
    private static func make(
        _ files: Files, clientAuthentication: ClientAuthentication?, configure: (inout TLSConfiguration) -> Void, generation: UInt64
    ) throws(ReloadingServerIdentityError) -> (InForce, [UInt8]) {
        let identity: ClientIdentity
        var contents: [[UInt8]]
        do {
            (contents, _) = try ReloadingClientIdentity.read(files.identity)
            identity = try ReloadingClientIdentity.load(files.identity, contents: contents, budget: PKCS12Budget())
        } catch {
            throw .identity(error)
        }
        var authentication = clientAuthentication
        if let path = files.clientCAs {
            let (bundle, anchors) = try clientCAs(path)
            contents.append(bundle)
            authentication = try authentication?.trusting(anchors, from: path)
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: identity.certificateChain.map { .certificate($0) }, privateKey: .privateKey(identity.privateKey))
        configure(&configuration)
        authentication?.apply(to: &configuration)
        do {
            let context = try NIOSSLContext(configuration: configuration)
            let inForce = InForce(context: context, clientAuthentication: authentication, certificate: identity.certificate, generation: generation)
            return (inForce, FileFingerprint.digest(contents))
        } catch {
            throw .context("\(error)")
        }
    }
}

/// The client-CA file's bytes and its certificates: at least one, every PEM certificate parsable (RFC 7468 §5).
private func clientCAs(_ path: String) throws(ReloadingServerIdentityError) -> ([UInt8], [Certificate]) {
    guard let bundle = try? LocalFile.read(path, limit: LocalFile.certificateLimit),
        let documents = try? PEMDocument.parseMultiple(pemString: String(decoding: bundle, as: UTF8.self))
    else { throw .clientCAs(path: path) }
    var anchors: [Certificate] = []
    for (index, document) in documents.filter({ $0.discriminator == "CERTIFICATE" }).enumerated() {
        guard let anchor = try? Certificate(derEncoded: document.derBytes) else { throw .clientCACertificate(path: path, index: index + 1) }
        anchors.append(anchor)
    }
    guard !anchors.isEmpty else { throw .clientCAs(path: path) }
    return (bundle, anchors)
}

extension ClientAuthentication {
    /// These requirements with the client CAs read from `path`: its anchors; with ``spiffeBundles``, the bundles
    /// rebuilt from them — each certificate in the trust domain of its own SPIFFE ID (X509-SVID.md §3.2), or, when
    /// one bundle was trusted, the certificates without a SPIFFE ID in its domain — and the allowed SPIFFE IDs checked
    /// again, so that the new bundles, not the anchors alone, decide each client.
    package func trusting(_ anchors: [Certificate], from path: String) throws(ReloadingServerIdentityError) -> ClientAuthentication {
        var replaced = self
        replaced.anchors = anchors
        guard let current = spiffeBundles else { return replaced }
        let domains = current.trustDomains
        let unnamed = anchors.filter { $0.spiffeID == nil }
        let bundles: [SPIFFEBundle]
        do {
            bundles =
                try SPIFFEBundle.bundles(of: anchors.filter { $0.spiffeID != nil }, source: path)
                + SPIFFEBundle.bundles(of: unnamed, source: path, trustDomain: domains.count == 1 ? domains.first : nil)
        } catch {
            throw .spiffeBundle(error)
        }
        let spiffeBundles = SPIFFETrustBundles(bundles)
        do {
            _ = try SPIFFETrustEvaluator(bundles: spiffeBundles, allowedIDs: allowedSPIFFEIDs, policy: validationPolicy)
        } catch {
            throw .spiffeConfiguration(path: path, error)
        }
        replaced.spiffeBundles = spiffeBundles
        replaced.anchors = spiffeBundles.allAnchors
        return replaced
    }
}

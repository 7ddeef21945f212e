import NIOSSL
import SwiftASN1
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
/// Files are watched as a ``ReloadingClientIdentity``'s are (`stat(2)` stamps, then the SHA-256 of their bytes,
/// compared before any context is made; bytes refused once are not tried again at a poll until they change, but for
/// a certificate not yet valid), and a replacement is checked the same way — readable, the key belonging to the certificate, the certificate within
/// its validity period — plus a client-CA bundle holding at least one certificate, each of them parsable, and a
/// context NIOSSL accepts. With SPIFFE client authentication (``ClientAuthentication/spiffeBundles``) the bundles
/// are rebuilt from the client-CA file, each certificate in the trust domain of its SPIFFE ID, and every allowed
/// SPIFFE ID must keep its trust domain's bundle. A replacement that fails keeps the context in force; the reason is
/// a ``ReloadingServerIdentityError``, kept (``lastRejection``) and given to observers (``observe(_:)``).
public final class ReloadingServerIdentity: Reloading, Sendable {
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
    public typealias Outcome = ReloadOutcome<ReloadingServerIdentityError>
    /// What observers are told: a context taken, or changed files refused.
    public typealias Event = ReloadEvent<InForce, ReloadingServerIdentityError>

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

    /// The files.
    public let files: Files
    /// How often ``run()`` looks at the files.
    public var pollInterval: Duration { reloading.pollInterval }
    private let reloading: ReloadingValue<InForce, ReloadingServerIdentityError>

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
        reloading = try ReloadingValue(
            paths: files.paths, pollInterval: pollInterval, dependsOnTime: { $0.dependsOnTime },
            read: { () throws(ReloadingServerIdentityError) in try ReloadingServerIdentity.read(files) },
            make: { (contents, generation) throws(ReloadingServerIdentityError) in
                try ReloadingServerIdentity.make(
                    files, contents: contents, clientAuthentication: clientAuthentication, configure: configure, generation: generation)
            })
    }

    /// The context, client authentication and certificate new connections are set up with.
    public var current: InForce { reloading.value }

    /// The generation of the context in force: 1 for the first, one more at each context taken.
    public var generation: UInt64 { reloading.generation }

    /// Why the files last read were not taken, while they stay as they are; nil once a context is taken.
    public var lastRejection: ReloadingServerIdentityError? { reloading.lastRejection }

    /// Calls `observer` after each context taken and each change refused (on the thread that reloaded, once the
    /// reload is over: it may call ``reload()`` or ``poll()``; keep it quick).
    @discardableResult
    public func observe(_ observer: @escaping @Sendable (Event) -> Void) -> ReloadObservation {
        ReloadObservation(id: reloading.observe(observer))
    }

    /// Ends an observer's calls.
    public func removeObserver(_ observation: ReloadObservation) {
        reloading.removeObserver(observation.id)
    }

    /// The TLS handler for a connection accepted now: the context in force, with the client-certificate
    /// verification of ``ClientAuthentication`` when the server asks for one (its verdict in `record`).
    public func makeServerHandler(record: ClientAuthenticationRecord = ClientAuthenticationRecord()) -> NIOSSLServerHandler {
        let inForce = current
        guard let authentication = inForce.clientAuthentication else { return NIOSSLServerHandler(context: inForce.context) }
        return authentication.makeServerHandler(context: inForce.context, record: record)
    }

    /// Reads the files now, whatever their stamps, and takes them if they differ from those in force and can be used.
    @discardableResult
    public func reload() -> Outcome {
        reloading.reload()
    }

    /// Reloads only when the files' stamps say they may have changed: what each tick of ``run()`` does.
    @discardableResult
    public func poll() -> Outcome {
        reloading.poll()
    }

    /// Polls every ``pollInterval`` until the calling task is cancelled.
    public func run() async {
        await reloading.run()
    }

    /// The files' bytes: the identity's (as ``ReloadingClientIdentity`` reads them), then the client-CA bundle's.
    private static func read(_ files: Files) throws(ReloadingServerIdentityError) -> [[UInt8]] {
        var contents: [[UInt8]]
        do {
            contents = try ReloadingClientIdentity.read(files.identity)
        } catch {
            throw .identity(error)
        }
        if let path = files.clientCAs {
            guard let bundle = try? LocalFile.read(path, limit: LocalFile.certificateLimit) else { throw .clientCAs(path: path) }
            contents.append(bundle)
        }
        return contents
    }

    /// The context the files' bytes (as ``read(_:)`` returned them) make, under `generation`.
    private static func make(
        _ files: Files, contents: [[UInt8]], clientAuthentication: ClientAuthentication?, configure: (inout TLSConfiguration) -> Void,
        generation: UInt64
    ) throws(ReloadingServerIdentityError) -> InForce {
        let identity: ClientIdentity
        do {
            identity = try ReloadingClientIdentity.load(
                files.identity, contents: files.clientCAs == nil ? contents : Array(contents.dropLast()), budget: PKCS12Budget())
        } catch {
            throw .identity(error)
        }
        var authentication = clientAuthentication
        if let path = files.clientCAs, let bundle = contents.last {
            authentication = try authentication?.trusting(try clientCAs(bundle, from: path), from: path)
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: identity.certificateChain.map { .certificate($0) }, privateKey: .privateKey(identity.privateKey))
        configure(&configuration)
        authentication?.apply(to: &configuration)
        do {
            let context = try NIOSSLContext(configuration: configuration)
            return InForce(context: context, clientAuthentication: authentication, certificate: identity.certificate, generation: generation)
        } catch {
            throw .context("\(error)")
        }
    }
}

/// The certificates of the client-CA file `path` (its bytes, `bundle`): at least one, every PEM certificate
/// parsable (RFC 7468 §5).
private func clientCAs(_ bundle: [UInt8], from path: String) throws(ReloadingServerIdentityError) -> [Certificate] {
    guard let documents = try? PEMDocument.parseMultiple(pemString: String(decoding: bundle, as: UTF8.self)) else {
        throw .clientCAs(path: path)
    }
    var anchors: [Certificate] = []
    for (index, document) in documents.filter({ $0.discriminator == "CERTIFICATE" }).enumerated() {
        guard let anchor = try? Certificate(derEncoded: document.derBytes) else { throw .clientCACertificate(path: path, index: index + 1) }
        anchors.append(anchor)
    }
    guard !anchors.isEmpty else { throw .clientCAs(path: path) }
    return anchors
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

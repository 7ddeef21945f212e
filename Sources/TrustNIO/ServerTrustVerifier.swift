import Logging
import NIOCore
import NIOSSL
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Runs a `Trust` evaluation inside the TLS handshake, through NIOSSL's custom verification
/// callback, and turns the `TrustDecision` into NIOSSL's verdict.
///
/// ```swift
/// let verifier = ServerTrustVerifier(evaluator: try PublicKeysTrustEvaluator(pins: pins))
/// let context = try NIOSSLContext(configuration: .trustClient())  // TLS 1.2+, .noHostnameVerification
/// let record = TrustRecord()
/// let tls = try verifier.makeClientHandler(context: context, host: "api.example.com", record: record)
/// // add `tls` first in the pipeline; on failure `record.decision` says why.
/// ```
///
/// - Important: The context must use `certificateVerification = .noHostnameVerification`
///   (``NIOSSL/TLSConfiguration/trustClient(minimumTLSVersion:applicationProtocols:)`` does):
///   with `.none`, NIOSSL runs the callback but ignores a `.failed` verdict. The name is checked by
///   the evaluation itself, against the canonical peer name.
public struct ServerTrustVerifier: Sendable {
    /// Decides about one presented chain. Called once per handshake; it may start on the event
    /// loop's thread (see `start`), so it must not block — await instead.
    public typealias Decide = @Sendable (ServerTrust) async -> TrustDecision

    /// A decision that is already known (e.g. from a cache), answered synchronously in the
    /// handshake without a hop to a Swift Task; `nil` falls back to the `decide` closure.
    public typealias Known = @Sendable (ServerTrust) -> TrustDecision?

    /// Hands a presented chain to whoever decides — a request's task, which runs its challenge handlers as its own
    /// child tasks — with the function that completes the handshake's verification; called once per handshake,
    /// on the event loop (it must not block). The decision may be given from any thread, at any later time.
    package typealias HandOff = @Sendable (ServerTrust, _ answer: @escaping @Sendable (TrustDecision) -> Void) -> Void

    /// How a chain ``known`` does not answer is decided.
    enum Deciding: Sendable {
        /// In a task the verifier starts (see ``ServerTrustVerifier/start(_:)``).
        case inTask(Decide)
        /// By whoever the chain is handed to.
        case handedOff(HandOff)
    }

    let deciding: Deciding
    let known: Known?

    /// Where each decision is logged (swift-log), as ``TrustDecisionLog`` words it: trusted at `debug`,
    /// refused at `notice`, a pin mismatch at `warning`, with the host, policy, reason codes and pins.
    /// `nil` (the default) logs nothing. A `TrustHTTPClient` logs through its own configuration instead.
    public var logger: Logger?

    /// Whether a trusted chain's validated path goes to NIOSSL as `VerificationMetadata`, where a
    /// server or NIO client reads it back (`peerValidatedCertificateChain`, Vapor's
    /// `req.peerCertificateChain`). NIOSSL then keeps BoringSSL's parsed copy of each certificate for
    /// as long as the connection lives — about 2 KiB per certificate. A client that keeps the
    /// `TrustDecision` itself (a `TrustHTTPClient` does) turns this off. Default: on.
    public var keepsValidatedChain = true

    /// Verifies with `decide` (a challenge handler, a per-host evaluator…); `known` may answer first.
    public init(known: Known? = nil, logger: Logger? = nil, decide: @escaping Decide) {
        self.known = known
        self.logger = logger
        self.deciding = .inTask(decide)
    }

    /// Verifies with `known` when it answers, else hands the chain off (``HandOff``): no task is started here.
    package init(known: Known?, handOff: @escaping HandOff) {
        self.known = known
        self.logger = nil
        self.deciding = .handedOff(handOff)
    }

    /// Verifies with `evaluator`; when it is an `ImmediateTrustEvaluator`, a decision it reaches without suspending
    /// (`ImmediateTrustEvaluator.decisionWithoutSuspending(_:)`) is answered in the handshake directly.
    public init(evaluator: any TrustEvaluator, logger: Logger? = nil) {
        self.logger = logger
        if let immediate = evaluator as? any ImmediateTrustEvaluator {
            self.known = { immediate.decisionWithoutSuspending($0) }
            // Runs only after `known` found no answer: the direct path is not looked for again.
            self.deciding = .inTask { await immediate.evaluate(afterImmediateMiss: $0) }
        } else {
            self.known = nil
            self.deciding = .inTask { await evaluator.evaluate($0) }
        }
    }

    /// The NIOSSL callback for a connection to `peerName`. Each call evaluates (a resumed or
    /// pooled connection is never trusted without it), records the decision in `record`, logs it
    /// to ``logger`` (when set), and completes NIOSSL's promise.
    ///
    /// The callback is `@Sendable` (NIOSSL's own typealias is not), so it also fits servers whose
    /// configuration takes a `@Sendable` verification callback (Vapor, Hummingbird). A trusted chain is
    /// returned to NIOSSL as the validated path (leaf to anchor) in `VerificationMetadata`, where those
    /// servers find the peer's chain (Vapor's `req.peerCertificateChain`).
    public func callback(peerName: PeerName?, record: TrustRecord, clock: @escaping @Sendable () -> Date = Date.init) -> TrustVerificationCallback {
        let deciding = self.deciding
        let known = self.known
        let logger = self.logger
        let keepsValidatedChain = self.keepsValidatedChain
        let host = peerName?.description ?? ""
        return { presented, promise in
            Self.verify(
                presented, peerName: peerName, at: clock(), known: known, deciding: deciding, keepsValidatedChain: keepsValidatedChain, promise: promise
            ) { decision in
                record.record(decision)
                // The verifier cannot tell a cached answer of `known` from an evaluation, nor the port.
                if let logger { TrustDecisionLog.log(decision, host: host, port: nil, cached: nil, to: logger) }
            }
        }
    }

    /// Decides about a presented chain — at once when `known` answers, else with `decide` (see
    /// ``start(_:)``) — gives the decision to `record` and completes NIOSSL's promise. Shared by the
    /// client (server trust) and the server side (``ClientAuthentication``).
    static func verify(
        _ presented: [NIOSSLCertificate], peerName: PeerName?, at time: Date, known: Known?, deciding: Deciding, keepsValidatedChain: Bool = true,
        promise: EventLoopPromise<NIOSSLVerificationResultWithMetadata>, record: @escaping @Sendable (TrustDecision) -> Void
    ) {
        let converted = convert(presented, peerName: peerName, at: time)
        @Sendable func finish(_ decision: TrustDecision) {
            record(decision)
            let metadata = keepsValidatedChain ? metadata(for: decision, converted: converted) : VerificationMetadata(nil)
            promise.succeed(decision.isTrusted ? .certificateVerified(metadata) : .failed)
        }
        switch converted.result {
        case .failure(let refusal):
            finish(refusal.decision)
        case .success(let trust):
            if let known, let decision = known(trust) {
                finish(decision)
                return
            }
            switch deciding {
            case .inTask(let decide): start { finish(await decide(trust)) }
            case .handedOff(let handOff): handOff(trust, finish)
            }
        }
    }

    /// The validated path (leaf to anchor) as NIOSSL certificates: the presented ones reused (matched to the
    /// parsed chain, nothing serialized again), an anchor the peer did not send converted from its DER.
    /// Without a path (nothing validated), none.
    static func metadata(for decision: TrustDecision, converted: Converted) -> VerificationMetadata {
        guard !decision.validatedPath.isEmpty, case .success(let trust) = converted.result else { return VerificationMetadata(nil) }
        var chain: [NIOSSLCertificate] = []
        for certificate in decision.validatedPath {
            if let index = trust.presentedChain.firstIndex(of: certificate) {
                chain.append(converted.nioCertificates[index])
            } else if let anchor = AnchorConversions.shared.nioCertificate(for: certificate) {
                chain.append(anchor)
            } else {
                return VerificationMetadata(nil)
            }
        }
        return VerificationMetadata(NIOSSL.ValidatedCertificateChain(chain))
    }

    /// Starts the evaluation. Where the runtime has `Task.immediate`, it begins on this (the event
    /// loop's) thread and, when nothing in it truly suspends — no challenge handler, as in default
    /// handling — completes NIOSSL's promise before the callback returns, like BoringSSL's own
    /// verification does: no hop to another thread and back in the middle of the handshake. A
    /// handler that awaits something moves the rest of the evaluation off the event loop.
    static func start(_ work: @escaping @Sendable () async -> Void) {
        #if compiler(>=6.2)
            if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
                Task.immediate { await work() }
                return
            }
        #endif
        Task { await work() }
    }

    /// A client TLS handler for `host` (SNI is sent for DNS names only, never for IP literals).
    public func makeClientHandler(context: NIOSSLContext, host: String, record: TrustRecord) throws -> NIOSSLClientHandler {
        let peerName = try PeerName(host: host)
        let sni: String?
        if case .dnsName(let name) = peerName { sni = name } else { sni = nil }
        return try NIOSSLClientHandler(
            context: context, serverHostname: sni, customVerificationCallbackWithMetadata: callback(peerName: peerName, record: record))
    }

    struct Refusal: Error {
        var decision: TrustDecision
    }

    /// Why a presented chain cannot even be evaluated: its leaf is not a certificate this engine accepts.
    public struct UnusableLeaf: Error, Sendable, CustomStringConvertible {
        /// Why, as the refusal a decision would carry (a weak key, an unsupported signature, malformed DER…).
        public var reasons: [TrustFailureReason]
        public var description: String { "the leaf certificate cannot be used: " + reasons.map(\.description).joined(separator: "; ") }
    }

    /// Converts NIOSSL's certificates (as a verification callback receives them, leaf first) into the
    /// engine's `ServerTrust`, for code that runs its own `TrustEvaluator` inside a NIOSSL callback.
    /// Each certificate is parsed once per process (cached by DER); an extra certificate that cannot be
    /// parsed is left out (it could only be a distractor); an unusable leaf throws ``UnusableLeaf``.
    public static func serverTrust(presented: [NIOSSLCertificate], peerName: PeerName?, evaluationTime: Date = Date()) throws(UnusableLeaf) -> ServerTrust {
        switch convert(presented, peerName: peerName, at: evaluationTime).result {
        case .success(let trust): return trust
        case .failure(let refusal): throw UnusableLeaf(reasons: refusal.decision.reasons)
        }
    }

    /// NIOSSL's certificates converted: the trust (or why not), and the NIOSSL certificates kept, in the
    /// order of `ServerTrust.presentedChain`.
    struct Converted: Sendable {
        var result: Result<ServerTrust, Refusal>
        var nioCertificates: [NIOSSLCertificate]
    }

    /// Converts NIOSSL's certificates; an unusable leaf becomes a refusal with its reasons,
    /// an unusable extra certificate is dropped (it can only be a distractor).
    static func convert(_ presented: [NIOSSLCertificate], peerName: PeerName?, at time: Date) -> Converted {
        var chain: [Certificate] = []
        var kept: [NIOSSLCertificate] = []
        for (index, nioCertificate) in presented.enumerated() {
            guard let der = try? nioCertificate.toDERBytes() else { continue }
            if let certificate = ParsedCertificateCache.shared.certificate(der: der) {
                chain.append(certificate)
                kept.append(nioCertificate)
            } else if index == 0 {
                let reasons =
                    RawCertificate(der: der)?.refusalReasons ?? [
                        .malformedCertificate(subject: "the server certificate", detail: "not a valid X.509 certificate")
                    ]
                let refusal = Refusal(
                    decision: .refused(reasons, trust: ServerTrust(presentedChain: [], peerName: peerName, evaluationTime: time), policy: .certificateParsing))
                return Converted(result: .failure(refusal), nioCertificates: [])
            }
        }
        return Converted(result: .success(ServerTrust(presentedChain: chain, peerName: peerName, evaluationTime: time)), nioCertificates: kept)
    }
}

/// A verification callback for NIOSSL (`customVerificationCallbackWithMetadata`), `@Sendable`.
public typealias TrustVerificationCallback = @Sendable ([NIOSSLCertificate], EventLoopPromise<NIOSSLVerificationResultWithMetadata>) -> Void

extension TLSConfiguration {
    /// A client configuration for use with ``ServerTrustVerifier``: TLS 1.2 or later (NIOSSL's own
    /// default minimum is TLS 1.0), `.noHostnameVerification` so the verifier's verdict is binding,
    /// ALPN as given, and Ed25519 among the accepted signature algorithms.
    ///
    /// No trust roots are loaded into BoringSSL (NIOSSL's `.default` parses the whole system bundle
    /// each time a context is made): with the verifier's callback installed BoringSSL never consults
    /// them, and without it every handshake fails — closed, never open.
    public static func trustClient(minimumTLSVersion: TLSVersion = .tlsv12, applicationProtocols: [String] = ["h2", "http/1.1"]) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = minimumTLSVersion
        configuration.certificateVerification = .noHostnameVerification
        configuration.trustRoots = .certificates([])
        configuration.applicationProtocols = applicationProtocols
        configuration.verifySignatureAlgorithms = [
            .ecdsaSecp256R1Sha256, .ecdsaSecp384R1Sha384, .ecdsaSecp521R1Sha512,
            .rsaPssRsaeSha256, .rsaPssRsaeSha384, .rsaPssRsaeSha512,
            .rsaPkcs1Sha256, .rsaPkcs1Sha384, .rsaPkcs1Sha512, .ed25519,
        ]
        return configuration
    }
}

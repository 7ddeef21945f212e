import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How a TLS server asks for and verifies client certificates (mutual TLS).
///
/// ```swift
/// let auth = ClientAuthentication(requirement: .required, anchors: [clientCA])
/// var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: key)
/// auth.apply(to: &tls)                                  // request (and require) a certificate, send CA names
/// let context = try NIOSSLContext(configuration: tls)
/// // per connection:
/// let record = ClientAuthenticationRecord()
/// try channel.pipeline.syncOperations.addHandler(auth.makeServerHandler(context: context, record: record))
/// // later, in the application: record.verifiedClient?.subject, .subjectAlternativeNames, .pin
/// ```
public struct ClientAuthentication: Sendable {
    /// Whether a client certificate is required or only requested.
    public enum Requirement: Sendable, Hashable {
        /// The handshake fails without a valid client certificate.
        case required
        /// A client certificate is asked for; without one the connection is anonymous, but one that
        /// is presented must verify.
        case optional
    }

    /// Whether the client must present a certificate.
    public var requirement: Requirement
    /// The CAs (or certificates) client certificates must chain to.
    public var anchors: [Certificate]
    /// Rules for the client chain: purpose `.tlsClient` (EKU clientAuth), no peer name, Web-PKI minimums.
    public var validationPolicy: ValidationPolicy
    /// If not empty, one of these keys must be on the client's validated path.
    public var pins: Set<SPKIPin>
    /// If not empty, the client leaf must hold one of these names: a SAN entry (DNS, email, URI, IP
    /// as text) or its whole subject DN as text.
    public var allowedNames: Set<String>
    /// When set, clients are workloads verified by SPIFFE ID (X509-SVID.md): each chain must end at an anchor of its
    /// own trust domain's bundle and pass `SPIFFESVIDRule` with ``allowedSPIFFEIDs`` (empty: any ID of a bundled
    /// trust domain); ``anchors`` are then the bundles' anchors (``init(requirement:spiffeBundles:allowedSPIFFEIDs:pins:validationPolicy:)``).
    public var spiffeBundles: SPIFFETrustBundles?
    /// The SPIFFE IDs, trust domains or path prefixes a client may have (with ``spiffeBundles``).
    public var allowedSPIFFEIDs: [SPIFFEIDMatcher] = []
    /// Where each client verification is logged: a verified client at `debug` (subject, pin), a refused
    /// chain at `notice` (reason codes, pins seen); `nil` (the default): no log lines.
    public var logger: Logger?

    /// Asks for client certificates that chain to `anchors`; required by default, validated for the `tlsClient` purpose.
    public init(
        requirement: Requirement = .required, anchors: [Certificate], pins: Set<SPKIPin> = [], allowedNames: Set<String> = [],
        validationPolicy: ValidationPolicy = ValidationPolicy(purpose: .tlsClient, checksPeerName: false)
    ) {
        self.requirement = requirement
        self.anchors = anchors
        self.pins = pins
        self.allowedNames = allowedNames
        self.validationPolicy = validationPolicy
    }

    /// Asks for client X.509-SVIDs: each must chain to its own trust domain's bundle in `spiffeBundles` and hold an
    /// ID `allowedSPIFFEIDs` accepts (``VerifiedClient/spiffeID`` then names it).
    ///
    /// - Throws: `SPIFFEConfigurationError` when no ID is allowed, no bundle has an anchor, or an allowed ID's trust
    ///   domain has no bundle.
    public init(
        requirement: Requirement = .required, spiffeBundles: SPIFFETrustBundles, allowedSPIFFEIDs: [SPIFFEIDMatcher], pins: Set<SPKIPin> = [],
        validationPolicy: ValidationPolicy = ValidationPolicy(purpose: .tlsClient, checksPeerName: false)
    ) throws(SPIFFEConfigurationError) {
        // The same checks as an evaluator's: a configuration that could never trust a client fails here.
        _ = try SPIFFETrustEvaluator(bundles: spiffeBundles, allowedIDs: allowedSPIFFEIDs, policy: validationPolicy)
        self.init(requirement: requirement, anchors: spiffeBundles.allAnchors, pins: pins, validationPolicy: validationPolicy)
        self.spiffeBundles = spiffeBundles
        self.allowedSPIFFEIDs = allowedSPIFFEIDs
    }

    /// Requests client certificates (required or optional) and sends the anchors' names as acceptable CAs.
    public func apply(to configuration: inout TLSConfiguration) {
        configuration.certificateVerification = requirement == .required ? .noHostnameVerification : .optionalVerification
        configuration.sendCANameList = true
        configuration.trustRoots = .certificates(anchors.compactMap { try? NIOSSLCertificate(bytes: $0.derBytes, format: .der) })
    }

    /// The evaluator for client chains.
    public var validator: PathValidator {
        var policy = validationPolicy
        policy.pins = pins
        let rules: [any PathRule] = allowedNames.isEmpty ? [] : [AllowedClientNamesRule(names: allowedNames)]
        if let spiffeBundles {
            return SPIFFETrustEvaluator.pathValidator(
                bundles: spiffeBundles, allowedIDs: allowedSPIFFEIDs, policy: policy, additionalRules: rules, name: .clientAuthentication)
        }
        return PathValidator(anchors: .only(anchors), policy: policy, additionalRules: rules, name: .clientAuthentication)
    }

    /// A server TLS handler that verifies a presented client chain with ``validator`` and records the result.
    public func makeServerHandler(context: NIOSSLContext, record: ClientAuthenticationRecord) -> NIOSSLServerHandler {
        NIOSSLServerHandler(context: context, customVerificationCallbackWithMetadata: verificationCallback(record: record))
    }

    /// The verification callback itself, `@Sendable`, for servers that take one in their configuration
    /// (Vapor's `customCertificateVerifyCallbackWithMetadata`, Hummingbird's TLS options): each presented
    /// client chain is validated with ``validator``, logged, recorded in `record` when given, and a trusted
    /// one is returned to NIOSSL as its validated path (Vapor's `req.peerCertificateChain`).
    public func verificationCallback(record: ClientAuthenticationRecord? = nil) -> TrustVerificationCallback {
        let validator = self.validator
        let logger = self.logger
        return { presented, promise in
            ServerTrustVerifier.verify(
                presented, peerName: nil, at: Date(), known: nil, deciding: .inTask { await validator.evaluate($0) }, promise: promise
            ) { decision in
                record?.record(decision)
                Self.log(decision, to: logger)
            }
        }
    }

    static func log(_ decision: TrustDecision, to logger: Logger?) {
        guard let logger else { return }
        let leaf = decision.presentedChain.first
        var metadata: Logger.Metadata = [
            // The subject is the peer's choice: escaped (DisplayText), never a raw control character in a log.
            "client.subject": .string(DisplayText.escaped(leaf.map { $0.subject.description } ?? "")),
            "client.pin": "\(leaf.map { $0.spkiPin.description } ?? "")",
        ]
        if decision.isTrusted {
            logger.debug("client certificate verified", metadata: metadata)
        } else {
            metadata["client.reasons"] = .array(decision.reasons.map { .string($0.code) })
            logger.notice("client certificate refused", metadata: metadata)
        }
    }
}

/// What client authentication decided on one connection.
public final class ClientAuthenticationRecord: Sendable {
    private let state = NIOLockedValueBox<TrustDecision?>(nil)

    /// An empty record; the server handler fills it in.
    public init() {}

    /// The decision, if the client presented a certificate.
    public var decision: TrustDecision? { state.withLockedValue { $0 } }

    /// The verified client, if it presented a certificate that verified.
    public var verifiedClient: VerifiedClient? {
        guard let decision, decision.isTrusted else { return nil }
        return VerifiedClient(validatedPath: decision.validatedPath)
    }

    func record(_ decision: TrustDecision) {
        state.withLockedValue { $0 = decision }
    }
}

/// The client leaf must hold one of the allowed names (SAN entry or subject DN).
package struct AllowedClientNamesRule: PathRule {
    /// The allowed names: SAN entries or subject DNs, as text.
    package var names: Set<String>

    /// A rule allowing the leaves that hold one of `names`.
    package init(names: Set<String>) {
        self.names = names
    }

    /// Nothing if the leaf holds an allowed name, else a `nameMismatch` listing the names it holds.
    package func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        let leaf = path.leaf
        let held =
            (leaf.subjectAlternativeNameStrings ?? []).map { $0.replacing("email:", with: "").replacing("URI:", with: "") }
            + [leaf.subject.description]
        if held.contains(where: names.contains) { return [] }
        return [.nameMismatch(expected: names.sorted().joined(separator: " | "), presented: held)]
    }
}

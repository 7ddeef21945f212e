import NIOSSL
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A client `TLSConfiguration` from one entry of a trust configuration, for clients that take a NIOSSL
/// `TLSConfiguration` and offer no verification callback (AsyncHTTPClient, postgres-nio and most other SwiftNIO
/// clients): the entry's anchors become BoringSSL's trust roots, its `minimumTLSVersion` the minimum version, its
/// `clientIdentity` the certificate chain and key presented, and the host name is checked by NIOSSL
/// (`.fullVerification`) — which, unlike this package's engine, also accepts a certificate that names the
/// connected IP address whatever host name was asked for, and falls back to the subject's common name when a
/// certificate has no subject alternative name (RFC 6125 §6.4.4 allows it; the engine, as the CA/Browser Forum's
/// requirements, does not).
///
/// Such a client runs BoringSSL's own verification, not this package's, so whatever of the entry only the engine
/// can apply is listed in ``notApplied`` — pins above all: a configuration with pins gives no pinning through
/// this type, and says so, rather than connecting as if it did. Use ``ServerTrustVerifier`` (a verification
/// callback) or `TrustHTTPClient` wherever the client accepts one.
public struct ClientTLSConfiguration: Sendable {
    /// Part of the entry that a client without a verification callback cannot apply.
    public enum NotApplied: Sendable, Hashable, CustomStringConvertible {
        /// The entry's pins (how many, and whether enforced or report-only): nothing is pinned.
        case pins(count: Int, mode: TrustConfiguration.Mode)
        /// Revocation checking (OCSP, CRLs): BoringSSL checks none.
        case revocation(RevocationPolicy.Mode)
        /// Certificate Transparency: BoringSSL checks no SCTs.
        case certificateTransparency(CertificateTransparencyPolicy.Mode)
        /// Failure reports: no pin is checked, so none is sent.
        case reportURIs(count: Int)
        /// The engine's key-size minimums and its refusal of SHA-1 signatures: BoringSSL applies its own, which are
        /// lower. Always listed.
        case keyAndSignatureMinimums(rsaBits: Int, ecBits: Int)
        /// DEBUG-only anchor overrides: ignored.
        case debugOverrides

        public var description: String {
            switch self {
            case .pins(let count, let mode):
                return "\(count) pin\(count == 1 ? "" : "s") (\(mode.rawValue)) not applied: the connection is not pinned"
                    + (count == 0 ? " (the engine refuses every server under an empty pin set)" : "")
            case .revocation(let mode): return "revocation checking (\(mode)) not applied"
            case .certificateTransparency(let mode): return "Certificate Transparency (\(mode)) not applied"
            case .reportURIs(let count): return "\(count) report URI\(count == 1 ? "" : "s") not used: no pin is checked, so none is reported"
            case .keyAndSignatureMinimums(let rsa, let ec):
                return "the minimums RSA \(rsa) bits, EC \(ec) bits and no SHA-1 signatures not applied (BoringSSL's own apply)"
            case .debugOverrides: return "debugOverrides not applied"
            }
        }
    }

    /// The configuration to hand to the client.
    public let tlsConfiguration: TLSConfiguration
    /// The entry's host pattern (`nil`: the base entry).
    package let matched: HostPattern?
    /// What of the entry this configuration does not apply: never empty (the engine's minimums are always
    /// listed), and naming pins whenever the entry has a pin set, even an empty one.
    public let notApplied: [NotApplied]
    /// The client identity's warnings (expired, expiring within 30 days, not yet valid), if it has one.
    public let warnings: [String]

    /// The TLS settings of `entry`.
    /// - Parameters:
    ///   - entry: one entry of a trust configuration (`TrustConfiguration.entry(for:)`).
    ///   - baseDirectory: where the entry's relative paths are read from (the configuration file's folder).
    ///   - environment: where the client identity's `passphraseEnvironment` is looked up.
    ///   - now: when the client certificate's validity is judged for ``warnings``.
    package init(
        entry: TrustConfiguration.Entry, baseDirectory: String,
        environment: [String: String] = ProcessInfo.processInfo.environment, now: Date = Date()
    ) throws(ClientTLSConfigurationError) {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .fullVerification
        configuration.minimumTLSVersion = entry.minimumTLSVersion == .tls13 ? .tlsv13 : .tlsv12
        configuration.trustRoots = .certificates(try Self.roots(entry.anchors, baseDirectory: baseDirectory))
        var warnings: [String] = []
        if let reference = entry.clientIdentity {
            do {
                if let identity = try ClientIdentity.load(reference, baseDirectory: baseDirectory, environment: environment, now: now) {
                    configuration.certificateChain = identity.certificateChain.map { .certificate($0) }
                    configuration.privateKey = .privateKey(identity.privateKey)
                    warnings = identity.warnings
                }
            } catch {
                throw .clientIdentity(error)
            }
        }
        tlsConfiguration = configuration
        matched = entry.host
        notApplied = Self.notApplied(by: entry)
        self.warnings = warnings
    }

    /// BoringSSL's roots: the engine's default public roots (`RootStore.default`, so both verifications start from
    /// the same store) unless the entry replaces them, plus the entry's anchors.
    private static func roots(_ anchors: TrustConfiguration.Anchors?, baseDirectory: String) throws(ClientTLSConfigurationError) -> [NIOSSLCertificate] {
        var certificates = anchors?.replaceSystem == true ? [] : RootStore.default.certificates
        if let anchors {
            let loaded = anchors.load(baseDirectory: baseDirectory, path: "anchors")
            guard loaded.problems.isEmpty else { throw .anchors(TrustConfigurationFileError(problems: loaded.problems)) }
            certificates += loaded.certificates
        }
        var roots: [NIOSSLCertificate] = []
        for certificate in certificates {
            guard let converted = try? NIOSSLCertificate(bytes: certificate.derBytes, format: .der) else {
                throw .anchorNotReadableByBoringSSL(subject: certificate.subject.description)
            }
            roots.append(converted)
        }
        guard !roots.isEmpty else { throw .noAnchors }
        return roots
    }

    /// Everything in `entry` that BoringSSL's own verification leaves out, in the file's order.
    static func notApplied(by entry: TrustConfiguration.Entry) -> [NotApplied] {
        var list: [NotApplied] = []
        // Any pin set, an empty one included: the engine refuses every chain under it, this configuration would not.
        if let pins = entry.pins { list.append(.pins(count: pins.sha256.count, mode: entry.mode)) }
        list.append(.keyAndSignatureMinimums(rsaBits: entry.minimumRSABits, ecBits: entry.minimumECBits))
        if !entry.reportURIs.isEmpty { list.append(.reportURIs(count: entry.reportURIs.count)) }
        if entry.debugOverrides != nil { list.append(.debugOverrides) }
        if let revocation = entry.revocation, revocation.mode != .off { list.append(.revocation(revocation.mode)) }
        if let ct = entry.certificateTransparency, ct.mode != .off { list.append(.certificateTransparency(ct.mode)) }
        return list
    }
}

/// Why a ``ClientTLSConfiguration`` could not be made.
public struct ClientTLSConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The error with its data, for this package's code (cases come in minor versions without breaking a
    /// client, who shows the error: its description says what is wrong).
    package let detail: Detail

    package init(_ detail: Detail) { self.detail = detail }

    public var description: String { detail.description }

    /// The entry's anchor files could not be read.
    package static func anchors(_ value0: TrustConfigurationFileError) -> Self { Self(.anchors(value0)) }
    /// An anchor the engine read that BoringSSL cannot (its subject, as the certificate has it).
    package static func anchorNotReadableByBoringSSL(subject: String) -> Self { Self(.anchorNotReadableByBoringSSL(subject: subject)) }
    /// No anchor at all: the system has no root store (`SystemRoots`) and the entry names none.
    package static let noAnchors = Self(.noAnchors)
    /// The entry's client identity could not be loaded.
    package static func clientIdentity(_ value0: ClientIdentityError) -> Self { Self(.clientIdentity(value0)) }
}

extension ClientTLSConfigurationError {
    /// The cases, exhaustive inside this package.
    package enum Detail: Sendable {
        /// The entry's anchor files could not be read.
        case anchors(TrustConfigurationFileError)
        /// An anchor the engine read that BoringSSL cannot (its subject, as the certificate has it).
        case anchorNotReadableByBoringSSL(subject: String)
        /// No anchor at all: the system has no root store (`SystemRoots`) and the entry names none.
        case noAnchors
        /// The entry's client identity could not be loaded.
        case clientIdentity(ClientIdentityError)

        package var description: String {
            switch self {
            case .anchors(let error): return "the anchors: \(error)"
            case .anchorNotReadableByBoringSSL(let subject): return "BoringSSL cannot read the anchor \(DisplayText.escaped(subject))"
            case .noAnchors: return "no anchor: the system has no root store and the entry names none"
            case .clientIdentity(let error): return "the client identity: \(error)"
            }
        }
    }
}

extension ConfiguredTrustEvaluator {
    /// The TLS settings for `host` from the entry that matches it, for a client that takes a `TLSConfiguration`
    /// and no verification callback; see ``ClientTLSConfiguration`` for what such a client cannot apply.
    public func clientTLSConfiguration(forHost host: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ClientTLSConfigurationError) -> ClientTLSConfiguration
    {
        try ClientTLSConfiguration(entry: entry(for: host), baseDirectory: baseDirectory, environment: environment)
    }
}

import NIOCore
import NIOSSL
import Trust
import X509

/// The client identity a server verified, for the application.
///
/// A server whose TLS handler runs ``ClientAuthentication/verificationCallback(record:)`` (directly, through
/// ``ClientAuthentication/makeServerHandler(context:record:)``, or as Vapor's
/// `customCertificateVerifyCallbackWithMetadata`) hands each trusted client's validated path back to NIOSSL,
/// which keeps it for the connection. A request handler reads it back with
/// ``NIOCore/Channel/verifiedClient()`` (any framework that exposes the connection's `Channel`,
/// as Hummingbird's request-context source does) or builds it from Vapor's `req.peerCertificateChain` with
/// ``init(validatedPath:)``.
public struct VerifiedClient: Sendable, Hashable {
    /// The client leaf's subject DN, as text.
    public var subject: String
    /// The client leaf's subject alternative names, as text.
    public var subjectAlternativeNames: [String]
    /// The SPKI pin of the client's key.
    public var pin: SPKIPin
    /// The validated path, client leaf first.
    public var chain: [Certificate]
    /// The client's SPIFFE ID when its leaf is an X.509-SVID (exactly one URI SAN, a valid `spiffe://` ID;
    /// X509-SVID.md §2); `nil` otherwise. Authorise on it only when ``ClientAuthentication/spiffeBundles`` verified
    /// the chain (a CA outside SPIFFE may write any URI).
    public var spiffeID: SPIFFEID?

    /// The client of a validated path (leaf first, as a trusted `TrustDecision.validatedPath` is); `nil` for an empty path.
    public init?(validatedPath: [Certificate]) {
        guard let leaf = validatedPath.first else { return nil }
        self.subject = leaf.subject.description
        self.subjectAlternativeNames = leaf.subjectAlternativeNameStrings ?? []
        self.pin = leaf.spkiPin
        self.chain = validatedPath
        self.spiffeID = leaf.spiffeID
    }

    /// The client of the validated chain NIOSSL kept for a connection (its `peerValidatedCertificateChain`).
    ///
    /// - Throws: ``UnreadableChain`` if a certificate NIOSSL holds cannot be serialised or parsed again.
    public init(validatedChain: NIOSSL.ValidatedCertificateChain) throws(UnreadableChain) {
        var path: [Certificate] = []
        for certificate in validatedChain {
            guard let der = try? certificate.toDERBytes(), let parsed = ParsedCertificateCache.shared.certificate(der: der) else {
                throw UnreadableChain(position: path.count)
            }
            path.append(parsed)
        }
        // NIOSSL's `ValidatedCertificateChain` is never empty (its initialiser requires a leaf).
        guard let client = VerifiedClient(validatedPath: path) else { throw UnreadableChain(position: 0) }
        self = client
    }

    /// A certificate of a connection's validated chain that could not be read back.
    public struct UnreadableChain: Error, Sendable, Hashable, CustomStringConvertible {
        /// Its position in the chain, leaf = 0.
        public var position: Int
        /// Says which certificate could not be read.
        public var description: String { "certificate \(position) of the connection's validated chain could not be read back" }
    }
}

extension Channel {
    /// The client this connection's TLS handshake verified, read from the validated chain NIOSSL keeps; `nil`
    /// when the client presented no certificate (an anonymous connection under ``ClientAuthentication/Requirement/optional``)
    /// or when the handshake's verification callback returned no validated chain (BoringSSL's own verification,
    /// or a callback other than ``ClientAuthentication``'s). Fails if the pipeline has no `NIOSSLHandler`.
    public func verifiedClient() -> EventLoopFuture<VerifiedClient?> {
        nioSSL_peerValidatedCertificateChain().flatMapThrowing { chain in
            try chain.map { try VerifiedClient(validatedChain: $0) }
        }
    }
}

extension ChannelPipeline.SynchronousOperations {
    /// ``NIOCore/Channel/verifiedClient()``, on the channel's event loop.
    public func verifiedClient() throws -> VerifiedClient? {
        try nioSSL_peerValidatedCertificateChain().map { try VerifiedClient(validatedChain: $0) }
    }
}

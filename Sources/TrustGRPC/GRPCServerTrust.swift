#if GRPC
    import GRPCCore
    import GRPCNIOTransportHTTP2Posix
    import NIOCore
    import NIOSSL
    import Trust
    import TrustNIO

    /// Mutual TLS for a gRPC server (grpc-swift 2, the NIO Posix HTTP/2 transport): each client certificate is
    /// verified by a ``ClientAuthentication`` (anchors, pins, allowed names, the `tlsClient` purpose), and a handler
    /// reads the client it verified from its RPC's context (``GRPCCore/ServerContext/verifiedClient``).
    ///
    /// ```swift
    /// let trust = GRPCServerTrust(ClientAuthentication(anchors: [clientCA]))
    /// let transport = HTTP2ServerTransport.Posix(
    ///     address: .ipv4(host: "0.0.0.0", port: 8443),
    ///     transportSecurity: try trust.transportSecurity(certificateChain: chain, privateKey: key))
    /// // in a handler: context.verifiedClient?.subject
    /// ```
    ///
    /// The transport's `customVerificationCallback` is the authentication's ``ClientAuthentication/verificationCallback(record:)``,
    /// which hands each trusted client's validated path back to NIOSSL; the transport gives it to handlers as the
    /// context's `peerCertificateChain`.
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    public struct GRPCServerTrust: Sendable {
        /// How client certificates are verified; its ``ClientAuthentication/requirement`` must be `.required`.
        public var clientAuthentication: ClientAuthentication
        /// Called with every client verification's decision, the refused ones included (a refused client
        /// never reaches a handler, so this is where its reasons are seen); on the connection's event loop or a task
        /// of the evaluation: it must not block.
        public var onDecision: (@Sendable (TrustDecision) -> Void)?

        /// Verifies clients with `clientAuthentication`, telling `onDecision` each decision.
        public init(_ clientAuthentication: ClientAuthentication, onDecision: (@Sendable (TrustDecision) -> Void)? = nil) {
            self.clientAuthentication = clientAuthentication
            self.onDecision = onDecision
        }

        /// Sets `tls` to require a client certificate (BoringSSL's own verification replaced by the authentication's,
        /// its anchors as the trust roots).
        /// - Throws: ``GRPCServerTrustError/optionalClientCertificatesUnsupported`` when the requirement is `.optional`:
        ///   the transport can require a client certificate or not ask for one, not ask without requiring it.
        public func apply(to tls: inout HTTP2ServerTransport.Posix.TransportSecurity.TLS) throws(GRPCServerTrustError) {
            guard clientAuthentication.requirement == .required else { throw .optionalClientCertificatesUnsupported }
            tls.clientCertificateVerification = .noHostnameVerification
            tls.trustRoots = .certificates(clientAuthentication.anchors.map { .bytes($0.derBytes, format: .der) })
            tls.customVerificationCallback = verificationCallback()
        }

        /// A mutual-TLS security for the server transport: its certificate chain and key, clients verified as ``apply(to:)`` sets.
        public func transportSecurity(
            certificateChain: [TLSConfig.CertificateSource], privateKey: TLSConfig.PrivateKeySource
        ) throws(GRPCServerTrustError) -> HTTP2ServerTransport.Posix.TransportSecurity {
            var tls = HTTP2ServerTransport.Posix.TransportSecurity.TLS.mTLS(certificateChain: certificateChain, privateKey: privateKey)
            try apply(to: &tls)
            return .tls(tls)
        }

        /// The authentication's verification callback; with ``onDecision``, each handshake's decision is read from
        /// a record of its own once the verdict is given, and passed on before NIOSSL has it.
        func verificationCallback() -> TrustVerificationCallback {
            let authentication = clientAuthentication
            guard let onDecision else { return authentication.verificationCallback() }
            return { presented, promise in
                let record = ClientAuthenticationRecord()
                let verdict = promise.futureResult.eventLoop.makePromise(of: NIOSSLVerificationResultWithMetadata.self)
                verdict.futureResult.whenComplete { result in
                    if let decision = record.decision { onDecision(decision) }
                    promise.completeWith(result)
                }
                authentication.verificationCallback(record: record)(presented, verdict)
            }
        }
    }

    /// Why a ``GRPCServerTrust`` cannot configure a server transport.
    public struct GRPCServerTrustError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The error with its data, for this package's code: cases come in minor versions without breaking a client,
        /// who shows the error (its description says what is wrong).
        package let detail: Detail

        package init(_ detail: Detail) { self.detail = detail }

        /// Human-readable form.
        public var description: String { detail.description }

        /// The transport cannot ask for a client certificate without requiring one.
        public static let optionalClientCertificatesUnsupported = Self(.optionalClientCertificatesUnsupported)

        /// The cases, exhaustive inside this package.
        package enum Detail: Sendable, Hashable {
            /// The transport cannot ask for a client certificate without requiring one.
            case optionalClientCertificatesUnsupported

            package var description: String {
                switch self {
                case .optionalClientCertificatesUnsupported:
                    return "the gRPC transport cannot ask for an optional client certificate: use requirement .required"
                }
            }
        }
    }
#endif

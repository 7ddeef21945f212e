#if GRPC
    import GRPCCore
    import GRPCNIOTransportHTTP2Posix
    import TrustNIO

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    extension ServerContext {
        /// The client this RPC's connection verified, from the validated chain the transport keeps
        /// (`HTTP2ServerTransport.Posix.Context.peerCertificateChain`); `nil` on a connection without a verified client
        /// certificate, or whose verification callback returned no validated chain (BoringSSL's own verification).
        ///
        /// The chain is the one the verification callback returned: with ``GRPCServerTrust``, the path
        /// ``ClientAuthentication`` validated, leaf first.
        public var verifiedClient: VerifiedClient? {
            guard let posix = transportSpecific as? HTTP2ServerTransport.Posix.Context, let chain = posix.peerCertificateChain else { return nil }
            return VerifiedClient(validatedPath: Array(chain))
        }
    }
#endif

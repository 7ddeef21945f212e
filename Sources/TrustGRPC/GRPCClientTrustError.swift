#if GRPC
    import Trust
    import TrustNIO

    /// Why a ``GRPCClientTrust`` could not be made.
    public enum GRPCClientTrustError: Error, Sendable, CustomStringConvertible {
        /// The host is neither a DNS name nor an IP address (as given).
        case invalidHost(String)
        /// The configuration entry's client identity could not be loaded.
        case clientIdentity(ClientIdentityError)
        /// NIOSSL refused the TLS settings (BoringSSL's reason codes).
        case tlsContext(String)

        public var description: String {
            switch self {
            case .invalidHost(let host): return "not a host name or IP address: \(DisplayText.escaped(host))"
            case .clientIdentity(let error): return "the client identity: \(error)"
            case .tlsContext(let reasons): return "the TLS settings were refused (\(reasons.isEmpty ? "no reason given" : reasons))"
            }
        }
    }
#endif

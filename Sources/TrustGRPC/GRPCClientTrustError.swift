#if GRPC
    import Trust
    import TrustNIO

    /// Why a ``GRPCClientTrust`` could not be made.
    public struct GRPCClientTrustError: Error, Sendable, CustomStringConvertible {
        /// The error with its data, for this package's code: cases come in minor versions without breaking a client,
        /// who shows the error (its description says what is wrong).
        package let detail: Detail

        package init(_ detail: Detail) { self.detail = detail }

        /// Human-readable form.
        public var description: String { detail.description }

        package static func invalidHost(_ value0: String) -> Self { Self(.invalidHost(value0)) }
        package static func clientIdentity(_ value0: ClientIdentityError) -> Self { Self(.clientIdentity(value0)) }
        package static func tlsContext(_ value0: String) -> Self { Self(.tlsContext(value0)) }

        /// The cases, exhaustive inside this package.
        package enum Detail: Sendable {
            /// The host is neither a DNS name nor an IP address (as given).
            case invalidHost(String)
            /// The configuration entry's client identity could not be loaded.
            case clientIdentity(ClientIdentityError)
            /// NIOSSL refused the TLS settings (BoringSSL's reason codes).
            case tlsContext(String)

            package var description: String {
                switch self {
                case .invalidHost(let host): return "not a host name or IP address: \(DisplayText.escaped(host))"
                case .clientIdentity(let error): return "the client identity: \(error)"
                case .tlsContext(let reasons): return "the TLS settings were refused (\(reasons.isEmpty ? "no reason given" : reasons))"
                }
            }
        }
    }
#endif

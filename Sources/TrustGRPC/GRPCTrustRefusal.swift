#if GRPC
    import GRPCCore
    import Trust

    /// A gRPC connection's TLS handshake refused because the server was not trusted: the cause, through the
    /// transport's own `RPCError`s, of the error an RPC fails with (read it with ``GRPCCore/RPCError/trustDecision``).
    public struct GRPCTrustRefusal: Error, Sendable, CustomStringConvertible {
        /// The decision, with its reasons (`decision.reasons`), the chain presented and the policy.
        public let decision: TrustDecision
        /// The host the certificate had to name.
        public let host: String

        /// A refusal of `host` by `decision`.
        package init(decision: TrustDecision, host: String) {
            self.decision = decision
            self.host = host
        }

        /// The host and the reasons, escaped (the host and the certificates' names are the peer's or the caller's text).
        public var description: String {
            "the server \(DisplayText.escaped(host)) is not trusted: " + decision.reasons.map(\.description).joined(separator: "; ")
        }
    }

    extension RPCError {
        /// The refusal this error comes from, if a TLS handshake was refused by a ``GRPCClientTrust``: found in
        /// the chain of causes (an RPC that could not get a connection fails with `unavailable`, whose cause is
        /// the connection's error, whose cause is the refusal).
        public var trustRefusal: GRPCTrustRefusal? {
            var next: (any Error)? = cause
            // Bounded: a chain of causes is short, and a cycle must not hang the caller.
            for _ in 0..<16 {
                guard let error = next else { return nil }
                if let refusal = error as? GRPCTrustRefusal { return refusal }
                next = (error as? RPCError)?.cause
            }
            return nil
        }

        /// The ``TrustDecision`` that refused the server, if this error comes from a refused handshake (see ``trustRefusal``).
        public var trustDecision: TrustDecision? { trustRefusal?.decision }
    }
#endif

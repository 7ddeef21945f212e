extension TrustDecision {
    /// Who replaced an evaluator's decision, and the decision replaced (``TrustDecision/override``).
    public struct Override: Sendable {
        /// Who can replace an evaluator's decision.
        public enum Origin: String, Sendable, Hashable, CustomStringConvertible {
            /// A challenge handler's answer to a server-trust challenge: `useCredential` (trusted),
            /// `cancelAuthenticationChallenge` or `rejectProtectionSpace` (refused).
            case challengeHandler = "challenge-handler"
            /// `SecurityPolicy.allowInvalidCertificates` without pinning: AFNetworking accepts any chain.
            case allowInvalidCertificates = "allow-invalid-certificates"
            /// A trust configuration entry's `debugOverrides` anchors (DEBUG builds only): a chain the entry's
            /// policy refused validated to one of them (a debugging proxy's CA).
            case debugOverride = "debug-override"

            /// Its stable code (`challenge-handler`, `allow-invalid-certificates`, `debug-override`).
            public var description: String { rawValue }
        }

        /// Who replaced the decision.
        public let origin: Origin
        /// The decision replaced: the evaluator's (or an earlier override's).
        public let replaced: TrustDecision
    }
}

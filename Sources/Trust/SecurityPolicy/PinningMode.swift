/// AFNetworking's `AFSSLPinningMode`.
public enum PinningMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// No pinning: the chain must validate against the anchors (or `allowInvalidCertificates`).
    case none
    /// A certificate on the path must have the public key of a pinned certificate.
    case publicKey
    /// The pinned certificates are the only anchors; the path must validate to one of them.
    case certificate
}

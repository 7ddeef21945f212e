import Trust

/// What kind of authentication a challenge asks for.
public enum AuthenticationMethod: String, Sendable, Hashable {
    /// The server presented its certificate chain: trust it or not.
    case serverTrust
    /// The server asked for a client certificate.
    case clientCertificate
    /// HTTP Basic (RFC 7617).
    case httpBasic
    /// HTTP Digest (RFC 7616).
    case httpDigest
}

/// Where a challenge comes from: URLSession's `URLProtectionSpace`.
public struct ProtectionSpace: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// `https` or `http`.
    public var scheme: String
    /// The HTTP authentication realm, when there is one.
    public var realm: String?
    public var authenticationMethod: AuthenticationMethod
    /// Whether the challenge comes from a proxy (407) rather than the origin.
    public var isProxy: Bool

    public init(host: String, port: Int, scheme: String, realm: String? = nil, authenticationMethod: AuthenticationMethod, isProxy: Bool = false) {
        self.host = host
        self.port = port
        self.scheme = scheme
        self.realm = realm
        self.authenticationMethod = authenticationMethod
        self.isProxy = isProxy
    }

    public var description: String {
        "\(authenticationMethod.rawValue) for \(scheme)://\(host):\(port)" + (realm.map { " realm \"\($0)\"" } ?? "")
    }
}

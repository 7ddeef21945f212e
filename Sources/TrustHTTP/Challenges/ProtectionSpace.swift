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
    /// The host of the server (or proxy) asking.
    public var host: String
    /// The port of the server (or proxy) asking.
    public var port: Int
    /// `https` or `http`.
    public var scheme: String
    /// The HTTP authentication realm, when there is one.
    public var realm: String?
    /// What kind of authentication is asked for.
    public var authenticationMethod: AuthenticationMethod
    /// Whether the challenge comes from a proxy (407) rather than the origin.
    public var isProxy: Bool

    /// A protection space from its parts.
    public init(host: String, port: Int, scheme: String, realm: String? = nil, authenticationMethod: AuthenticationMethod, isProxy: Bool = false) {
        self.host = host
        self.port = port
        self.scheme = scheme
        self.realm = realm
        self.authenticationMethod = authenticationMethod
        self.isProxy = isProxy
    }

    /// Human-readable form.
    public var description: String {
        "\(authenticationMethod.rawValue) for \(scheme)://\(host):\(port)" + (realm.map { " realm \"\($0)\"" } ?? "")
    }
}

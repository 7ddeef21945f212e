import Trust

extension TrustConfigurationMembers {
    /// The members that act on the TLS connection, which this module applies (``ClientTLSConfiguration``) and so
    /// does a `TrustHTTPClient`: `minimumTLSVersion` (``TLSMinimum``) and `clientIdentity`
    /// (``Trust/TrustConfiguration/ClientIdentityReference``). Read a file that uses them with these:
    /// `ConfiguredTrustEvaluator(contentsOf: path, members: .transport)`.
    public static let transport = TrustConfigurationMembers(TLSMinimum.self)
        .union(TrustConfigurationMembers(TrustConfiguration.ClientIdentityReference.self))
}

extension TrustConfiguration.Entry {
    /// The lowest TLS version accepted from these hosts (`minimumTLSVersion`: `"1.2"`, the default, or `"1.3"`).
    public var minimumTLSVersion: TLSMinimum {
        get { self[member: TLSMinimum.self] ?? .tls12 }
        set { self[member: TLSMinimum.self] = newValue }
    }

    /// The client certificate to present to these hosts when they ask for one (`clientIdentity`), if any.
    public var clientIdentity: TrustConfiguration.ClientIdentityReference? {
        get { self[member: TrustConfiguration.ClientIdentityReference.self] }
        set { self[member: TrustConfiguration.ClientIdentityReference.self] = newValue }
    }
}

extension TrustConfiguration {
    /// Where an entry's client certificate is read from (its `clientIdentity` member): a PKCS#12 file, or a
    /// certificate file and a key file. A value only: TrustNIO's `ClientIdentity.load(_:baseDirectory:environment:now:)`
    /// reads the files.
    public struct ClientIdentityReference: Sendable, Hashable {
        /// The PKCS#12 file, relative to the configuration file.
        public var pkcs12: String?
        /// The name of the environment variable that holds the passphrase.
        public var passphraseEnvironment: String?
        /// The certificate file, relative to the configuration file.
        public var certificate: String?
        /// The private key file, relative to the configuration file.
        public var key: String?

        /// Creates a reference.
        public init(pkcs12: String? = nil, passphraseEnvironment: String? = nil, certificate: String? = nil, key: String? = nil) {
            self.pkcs12 = pkcs12
            self.passphraseEnvironment = passphraseEnvironment
            self.certificate = certificate
            self.key = key
        }
    }
}

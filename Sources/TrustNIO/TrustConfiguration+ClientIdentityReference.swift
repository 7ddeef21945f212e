import Trust

extension TrustConfiguration {
    /// Where an entry's client certificate is read from (its `clientIdentity` member): a PKCS#12 file, or a
    /// certificate file and a key file. ``ClientIdentity/load(_:baseDirectory:environment:now:)`` reads it.
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

extension TrustConfiguration.ClientIdentityReference: TrustConfigurationMember {
    package static let name = "clientIdentity"

    /// `{"pkcs12": PATH, "passphraseEnvironment": NAME}` or `{"certificate": PATH, "key": PATH}`: one of the two files.
    package static func read(_ value: JSONValue, at path: String, checker: inout TrustConfiguration.Checker) -> Self? {
        guard let fields = checker.members(value, path, allowed: ["pkcs12", "passphraseEnvironment", "certificate", "key"]) else { return nil }
        var reference = Self()
        reference.pkcs12 = fields["pkcs12"].flatMap { checker.string($0, path + ".pkcs12") }
        reference.passphraseEnvironment = fields["passphraseEnvironment"].flatMap { checker.string($0, path + ".passphraseEnvironment") }
        reference.certificate = fields["certificate"].flatMap { checker.string($0, path + ".certificate") }
        reference.key = fields["key"].flatMap { checker.string($0, path + ".key") }
        if (reference.pkcs12 == nil) == (reference.certificate == nil) {
            checker.problem(path, "needs either \"pkcs12\" or \"certificate\" (with \"key\" unless the file holds it)")
        }
        return reference
    }

    package static func json(_ value: Self) -> JSONValue? {
        var fields: [JSONValue.Member] = []
        if let file = value.pkcs12 { fields.append(.init(key: "pkcs12", value: .string(file))) }
        if let name = value.passphraseEnvironment { fields.append(.init(key: "passphraseEnvironment", value: .string(name))) }
        if let file = value.certificate { fields.append(.init(key: "certificate", value: .string(file))) }
        if let file = value.key { fields.append(.init(key: "key", value: .string(file))) }
        return .object(fields)
    }
}

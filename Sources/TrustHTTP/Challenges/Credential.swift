import Trust
import TrustNIO

/// How long a credential is remembered.
public enum CredentialPersistence: String, Sendable, Hashable, Codable {
    case none, forSession, permanent
}

/// An answer to a challenge: a user and password, or an explicit decision to trust a server.
public struct Credential: Sendable, CustomStringConvertible {
    /// What a credential holds.
    public enum Kind: Sendable {
        /// A user name and password (HTTP authentication).
        case user(String, password: String)
        /// "Trust this server": the `ServerTrust` of the challenge being answered.
        ///
        /// This case and the next are `indirect` (held by reference): their values are hundreds of
        /// bytes, and a ``TrustHTTPClientRequest`` carries a credential inline ("Frame sizes" in the "How a request flows"
        /// article).
        indirect case serverTrust(ServerTrust)
        /// A client certificate and key, for a client-certificate challenge.
        indirect case clientIdentity(ClientIdentity)
    }

    /// The answer itself.
    public var kind: Kind
    /// How long the credential is remembered.
    public var persistence: CredentialPersistence

    /// URLSession's `URLCredential(user:password:persistence:)`: a user and password.
    public init(user: String, password: String, persistence: CredentialPersistence = .forSession) {
        self.kind = .user(user, password: password)
        self.persistence = persistence
    }

    /// URLSession's `URLCredential(trust:)`: accept the server whose trust is given.
    public init(trust: ServerTrust) {
        self.kind = .serverTrust(trust)
        self.persistence = .none
    }

    /// URLSession's `URLCredential(identity:certificates:persistence:)`.
    public init(identity: ClientIdentity, persistence: CredentialPersistence = .forSession) {
        self.kind = .clientIdentity(identity)
        self.persistence = persistence
    }

    /// Whether this is a user-and-password credential.
    public var isUser: Bool {
        if case .user = kind { return true }
        return false
    }

    /// Never prints a password.
    public var description: String {
        switch kind {
        case .user(let user, _): return "Credential(user: \(user), password: <redacted>, \(persistence.rawValue))"
        case .serverTrust(let trust): return "Credential(trust: \(trust.peerName?.description ?? "?"))"
        case .clientIdentity(let identity): return "Credential(identity: \(identity.certificate.subject))"
        }
    }
}

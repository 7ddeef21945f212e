// A challenge handler that logs in where the service has an account, as a URLSession delegate would: it answers
// 401 and 407 challenges from the service's own secrets, refuses to send a password in clear text or to a realm it
// does not know, gives up after one wrong answer, and leaves server trust and client certificates to the default
// handling — or answers a client-certificate request with the service's identity, when it has one.
import Foundation
import TrustHTTP
import TrustNIO

/// Answers HTTP authentication challenges with the account the service holds for the host and realm.
public struct LoginChallengeHandler: ChallengeHandler {
    /// One account: where it is valid and its user name and password.
    public struct Account: Sendable {
        public var host: String
        public var realm: String
        public var user: String
        public var password: String

        public init(host: String, realm: String, user: String, password: String) {
            self.host = host
            self.realm = realm
            self.user = user
            self.password = password
        }
    }

    /// What the handler saw, for the service's audit log: never a password.
    public struct Seen: Sendable, Equatable {
        public var host: String
        public var port: Int
        public var realm: String?
        public var scheme: String
        public var method: AuthenticationMethod
        public var isProxy: Bool
        public var previousFailureCount: Int
        /// The status of the answer that asked (401, 407).
        public var status: Int?
        /// The challenge's scheme as the server named it, lowercased (`basic`, `digest`).
        public var challengeScheme: String?
        /// The challenge's parameter names (`realm`, `nonce`, `qop`…).
        public var parameterNames: [String]
        /// Why the previous answer failed, when one did.
        public var previousError: TrustHTTPClientError.Code?
    }

    private let accounts: [Account]
    private let clientIdentity: ClientIdentity?
    private let audit: @Sendable (Seen) -> Void

    /// A handler that logs in with `accounts`, presents `clientIdentity` to servers that ask for a certificate,
    /// and reports each login challenge it answers to `audit`.
    public init(accounts: [Account], clientIdentity: ClientIdentity? = nil, audit: @escaping @Sendable (Seen) -> Void = { _ in }) {
        self.accounts = accounts
        self.clientIdentity = clientIdentity
        self.audit = audit
    }

    public func handle(_ challenge: AuthenticationChallenge) async -> ChallengeDisposition {
        let space = challenge.protectionSpace
        switch space.authenticationMethod {
        case .serverTrust: return .performDefaultHandling
        case .clientCertificate:
            guard let clientIdentity else { return .performDefaultHandling }
            return .useCredential(Credential(identity: clientIdentity, persistence: .forSession))
        default: break
        }
        audit(
            Seen(
                host: space.host, port: space.port, realm: space.realm, scheme: space.scheme, method: space.authenticationMethod,
                isProxy: space.isProxy, previousFailureCount: challenge.previousFailureCount, status: challenge.failureResponse?.statusCode,
                challengeScheme: challenge.httpChallenge?.schemeName, parameterNames: challenge.httpChallenge?.parameters.map(\.name) ?? [],
                previousError: challenge.error?.code))
        // Basic and Digest carry parameters; a token68 challenge (Bearer-style) is not one this handler answers.
        guard challenge.httpChallenge?.token68 == nil else { return .rejectProtectionSpace }
        // One wrong answer is enough: a second would only lock the account.
        guard challenge.previousFailureCount == 0 else { return .cancelAuthenticationChallenge }
        // Basic sends the password itself: only over TLS (or to a proxy the service chose).
        if space.authenticationMethod == .httpBasic, space.scheme != "https", !space.isProxy { return .rejectProtectionSpace }
        guard let account = accounts.first(where: { $0.host == space.host && $0.realm == (challenge.httpChallenge?.realm ?? space.realm) })
        else { return .rejectProtectionSpace }
        return .useCredential(Credential(user: account.user, password: account.password, persistence: .none))
    }
}

import ClientRecipes
import Foundation
import Testing
import TrustHTTP

/// The handler's decisions, tested without a server: challenges are values a test builds.
@Suite struct LoginChallengeHandlerUnitTests {
    static let account = LoginChallengeHandler.Account(host: "api.example.com", realm: "api", user: "alice", password: "wonderland")

    static func challenge(
        scheme: String = "https", method: AuthenticationMethod = .httpDigest, isProxy: Bool = false, failures: Int = 0, realm: String = "api"
    ) -> AuthenticationChallenge {
        let space = ProtectionSpace(
            host: "api.example.com", port: scheme == "https" ? 443 : 80, scheme: scheme, realm: realm, authenticationMethod: method, isProxy: isProxy)
        let header = HTTPChallenge(
            scheme: method == .httpBasic ? "Basic" : "Digest", token68: nil, parameters: [("realm", realm), ("nonce", "abc"), ("qop", "auth")])
        let previous = failures > 0 ? TrustHTTPClientError(.userAuthenticationRequired, "the server refused the credential") : nil
        return AuthenticationChallenge(protectionSpace: space, previousFailureCount: failures, error: previous, httpChallenge: header)
    }

    @Test("answers its own realm once, over TLS, and records what it saw")
    func answers() async {
        let handler = LoginChallengeHandler(accounts: [Self.account])
        guard case .useCredential(let credential?) = await handler.handle(Self.challenge()) else {
            Issue.record("no credential for the account's realm")
            return
        }
        #expect(credential.isUser && credential.persistence == .none)
        #expect(!"\(credential)".contains("wonderland"))
        guard case .cancelAuthenticationChallenge = await handler.handle(Self.challenge(failures: 1)) else {
            Issue.record("a second try after a refusal")
            return
        }
    }

    @Test("Basic in clear text is refused unless to a proxy; an unknown realm is refused; server trust is left to the default")
    func refusals() async {
        let handler = LoginChallengeHandler(accounts: [Self.account])
        guard case .rejectProtectionSpace = await handler.handle(Self.challenge(scheme: "http", method: .httpBasic)) else {
            Issue.record("Basic sent in clear text")
            return
        }
        guard case .useCredential = await handler.handle(Self.challenge(scheme: "http", method: .httpBasic, isProxy: true)) else {
            Issue.record("the proxy's Basic challenge refused")
            return
        }
        guard case .rejectProtectionSpace = await handler.handle(Self.challenge(realm: "other")) else {
            Issue.record("an unknown realm answered")
            return
        }
        let trust = AuthenticationChallenge(
            protectionSpace: ProtectionSpace(host: "api.example.com", port: 443, scheme: "https", authenticationMethod: .serverTrust))
        guard case .performDefaultHandling = await handler.handle(trust) else {
            Issue.record("server trust not left to the default")
            return
        }
    }
}

// The README's example, kept compiling (PINS and PASSWORD from the environment).
import Foundation
import TrustHTTP

let environment = ProcessInfo.processInfo.environment
let password = environment["PASSWORD"] ?? ""
let pins = (environment["PINS"] ?? "").split(separator: ",").map(String.init)

var configuration = TrustHTTPClientConfiguration()
configuration.serverTrust = try PublicKeysTrustEvaluator(pins: Set(try pins.map { try SPKIPin(parsing: $0) }))
configuration.challengeHandler = ClosureChallengeHandler { challenge in
    switch challenge.protectionSpace.authenticationMethod {
    case .httpDigest, .httpBasic:
        return challenge.previousFailureCount == 0 ? .useCredential(Credential(user: "alice", password: password)) : .cancelAuthenticationChallenge
    default:
        return .performDefaultHandling  // server trust: the pinned evaluator decides, in the handshake
    }
}
let client = try TrustHTTPClient(configuration: configuration)
do {
    let response = try await client.data(for: TrustHTTPClientRequest(url: URL(string: environment["URL"] ?? "https://api.example.com/me")!))
    print(response.statusCode, response.text)
} catch let error as TrustHTTPClientError {
    print(error.code, error.trustDecision?.reasons ?? [])  // why, in data: each reason has a `kind`
}
await client.shutdown()

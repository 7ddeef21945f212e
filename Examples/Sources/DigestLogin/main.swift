// HTTP Digest (or Basic) through the challenge model: a handler sees each challenge and answers it.
//   swift run DigestLogin "https://good.lab.test:PORT/digest?algorithm=SHA-256" alice wonderland LAB/roots.pem 127.0.0.1
import Foundation
import TrustHTTP

let arguments = CommandLine.arguments
guard arguments.count >= 5, let url = URL(string: arguments[1]), let host = url.host else {
    print("usage: DigestLogin URL USER PASSWORD CA-FILE [CONNECT-ADDRESS]")
    exit(2)
}
let credential = Credential(user: arguments[2], password: arguments[3], persistence: .forSession)
var configuration = TrustHTTPClientConfiguration()
configuration.serverTrust = DefaultTrustEvaluator(anchors: .system(adding: try CertificateSource.certificates(atPath: arguments[4])))
if arguments.count > 5 { configuration.resolve[host] = arguments[5] }
configuration.challengeHandler = ClosureChallengeHandler { challenge in
    let space = challenge.protectionSpace
    guard space.authenticationMethod == .httpDigest || space.authenticationMethod == .httpBasic else { return .performDefaultHandling }
    print("challenge: \(space), offered \(challenge.httpChallenge?.description ?? "?"), previous failures \(challenge.previousFailureCount)")
    // A wrong password gets exactly one more chance; then the 401 comes back.
    return challenge.previousFailureCount == 0 ? .useCredential(credential) : .cancelAuthenticationChallenge
}
let client = try TrustHTTPClient(configuration: configuration)
do {
    let response = try await client.data(for: TrustHTTPClientRequest(url: url))
    print(response.statusCode, response.text)
} catch let error as TrustHTTPClientError {
    print(error.code, error.message)
}
await client.shutdown()

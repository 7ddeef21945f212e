// A request to a server whose issuing CA's key is pinned (with a backup pin).
// Try it with the lab: `swift run trust lab`, then
//   swift run PinnedRequest https://good.lab.test:PORT/ LAB/roots.pem "$(trust pin LAB/intermediate.pem | cut -d' ' -f1)" 127.0.0.1
import Foundation
import TrustHTTP

let arguments = CommandLine.arguments
guard arguments.count >= 4, let url = URL(string: arguments[1]), let host = url.host else {
    print("usage: PinnedRequest URL CA-FILE PIN [CONNECT-ADDRESS]")
    exit(2)
}
let anchors = try CertificateSource.certificates(atPath: arguments[2])
let primary = try SPKIPin(parsing: arguments[3])
let backup = try SPKIPin(digest: [UInt8](repeating: 0, count: 32))  // your offline backup key's pin

var configuration = TrustHTTPClientConfiguration()
// The pins hold for this host; any other (a redirect to another host) is trusted as the roots say.
let pinned = try PublicKeysTrustEvaluator(pins: [primary, backup], anchors: .system(adding: anchors))
configuration.serverTrust = PerHostTrustEvaluator([host: pinned], otherHosts: DefaultTrustEvaluator(anchors: .system(adding: anchors)))
if arguments.count > 4 { configuration.resolve[host] = arguments[4] }
let client = try TrustHTTPClient(configuration: configuration)
do {
    let response = try await client.data(for: TrustHTTPClientRequest(url: url))
    print(response.statusCode, response.text)
    print("validated path:", response.serverTrust?.validatedPath.map(\.subject.description) ?? [])
} catch let error as TrustHTTPClientError {
    print(error.code, error.message)
    for reason in error.trustDecision?.reasons ?? [] { print(" -", reason) }
}
await client.shutdown()

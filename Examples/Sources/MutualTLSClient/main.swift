// Mutual TLS: a PKCS#12 identity offered when the server asks, chosen per host.
//   swift run MutualTLSClient https://mtls-required.good.lab.test:PORT/whoami client.p12 PASSPHRASE LAB/roots.pem 127.0.0.1
import Foundation
import TrustHTTP

let arguments = CommandLine.arguments
guard arguments.count >= 5, let url = URL(string: arguments[1]), let host = url.host else {
    print("usage: MutualTLSClient URL P12-FILE PASSPHRASE CA-FILE [CONNECT-ADDRESS]")
    exit(2)
}
let identity: ClientIdentity
do {
    identity = try ClientIdentity(pkcs12File: arguments[2], passphrase: arguments[3])
} catch {
    print("cannot use \(arguments[2]): \(error)")  // wrong passphrase, no key, truncated… — typed, never a crash
    exit(58)
}
for warning in identity.warnings { print("warning:", warning) }

var configuration = TrustHTTPClientConfiguration()
configuration.serverTrust = DefaultTrustEvaluator(anchors: .system(adding: try CertificateSource.certificates(atPath: arguments[4])))
configuration.clientIdentities[host] = identity
if arguments.count > 5 { configuration.resolve[host] = arguments[5] }
let client = try TrustHTTPClient(configuration: configuration)
do {
    print(try await client.data(for: TrustHTTPClientRequest(url: url)).text)
} catch let error as TrustHTTPClientError {
    print(error.code, error.message)  // clientCertificateRejected / clientCertificateRequired name the TLS alert
}
await client.shutdown()

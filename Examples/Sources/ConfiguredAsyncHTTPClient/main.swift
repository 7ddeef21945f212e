// A GET with AsyncHTTPClient, its TLS settings (anchors, minimum TLS version, client identity) from a trust
// configuration file; whatever of the file it cannot apply is printed first.
//   swift run ConfiguredAsyncHTTPClient trust.json https://api.example.com/
import AsyncHTTPClient
import AsyncHTTPClientTLS
import Foundation

let arguments = CommandLine.arguments
guard arguments.count >= 3, let url = URL(string: arguments[2]), let host = url.host else {
    print("usage: ConfiguredAsyncHTTPClient CONFIG-FILE URL")
    exit(2)
}
let (client, warnings) = try makeConfiguredHTTPClient(configurationFile: arguments[1], host: host)
for warning in warnings { print("warning: \(warning)") }
do {
    let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(30))
    print(response.status.code)
} catch {
    print("failed: \(error)")
}
try await client.shutdown()

// A per-host trust configuration file: validated at load (every problem with its JSON path),
// then used by the TrustHTTPClient, with failure reports sent by a reporter of its own.
//   swift run PerHostConfiguration trust.json https://api.example.com/
import Foundation
import TrustHTTP

let arguments = CommandLine.arguments
guard arguments.count >= 3, let url = URL(string: arguments[2]) else {
    print("usage: PerHostConfiguration CONFIG-FILE URL")
    exit(2)
}
let evaluator: ConfiguredTrustEvaluator
do {
    evaluator = try ConfiguredTrustEvaluator(contentsOf: arguments[1])  // relative anchor paths: from the file's folder
} catch {
    for problem in error.problems { print("\(problem.path): \(problem.message)") }
    exit(1)
}
let reporter = PinFailureReporter()
var configuration = TrustHTTPClientConfiguration()
configuration.serverTrust = evaluator
configuration.pinFailureReporter = reporter
let client = try TrustHTTPClient(configuration: configuration)
do {
    let response = try await client.data(for: TrustHTTPClientRequest(url: url))
    print(response.statusCode, response.serverTrust?.notes ?? [])
} catch let error as TrustHTTPClientError {
    print(error.code, error.message)
}
await client.shutdown()
await reporter.flush()

import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Trust
import TrustHTTP
import TrustLab

// Session (trust evaluation in the handshake + an SPKI pin) against AsyncHTTPClient (custom
// trustRoots, no pinning), side by side in one run, against the same in-process TrustLab server
// over loopback. Figures: keep-alive requests/s and new-connection handshakes/s with 1 and 2
// concurrent clients; the ratio Session / AsyncHTTPClient is what to read (absolute numbers
// include the server sharing the same cores).

// Rounds alternate (ours, theirs, ours, …) so drift on a shared machine hits both alike; the
// figure is the median round.
let seconds = Double(CommandLine.arguments.dropFirst().first ?? "") ?? 1
let rounds = Int(CommandLine.arguments.dropFirst(2).first ?? "") ?? 7
let pki = try LabPKI.make()
let group = MultiThreadedEventLoopGroup.singleton

func measure(_ label: String, clients: Int, _ request: @escaping @Sendable () async throws -> Void) async throws -> Double {
    for _ in 0..<20 { try await request() }  // warm-up: connections, caches
    let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    let start = ContinuousClock.now
    let total = try await withThrowingTaskGroup(of: Int.self) { group in
        for _ in 0..<clients {
            group.addTask {
                var count = 0
                while ContinuousClock.now < deadline && count < 1_000_000 {
                    try await request()
                    count += 1
                }
                return count
            }
        }
        return try await group.reduce(0, +)
    }
    let elapsed = start.duration(to: .now)
    let rate = Double(total) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    return rate
}

func compare(clients: Int, _ ours: @escaping @Sendable () async throws -> Void, _ theirs: @escaping @Sendable () async throws -> Void) async throws -> (Double, Double) {
    var a: [Double] = []
    var b: [Double] = []
    for _ in 0..<rounds {
        a.append(try await measure("ours", clients: clients, ours))
        b.append(try await measure("theirs", clients: clients, theirs))
    }
    return (a.sorted()[a.count / 2], b.sorted()[b.count / 2])
}

func row(_ name: String, _ session: Double, _ baseline: Double) {
    let pad = { (text: String, width: Int) in text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0) }
    print(pad(name, 34) + String(format: "%10.0f/s   %10.0f/s   %5.2f×", session, baseline, session / baseline))
}

let server = try await LabServer.start("good", pki: pki, protocols: .http1Only)
let url = "https://127.0.0.1:\(server.port)/"

// Our Session: lab roots only, plus a pin on the issuing CA, evaluated on every new connection.
var configuration = SessionConfiguration()
configuration.serverTrust = .evaluator(try PublicKeysTrustEvaluator(pins: [pki.intermediate.certificate.spkiPin], anchors: .only(pki.trustedRoots)))
configuration.httpVersion = .http1Only
configuration.maximumIdleConnectionsPerOrigin = 8
let session = try Session(configuration: configuration)
var uncachedConfiguration = configuration
uncachedConfiguration.evaluationCache = nil
let uncached = try Session(configuration: uncachedConfiguration)

// The baseline: AsyncHTTPClient with the lab roots as trustRoots (BoringSSL's verification, no pinning).
var tls = TLSConfiguration.makeClientConfiguration()
tls.trustRoots = .certificates(try pki.trustedRoots.map { try NIOSSLCertificate(bytes: $0.derBytes, format: .der) })
tls.applicationProtocols = ["http/1.1"]
var ahcConfiguration = HTTPClient.Configuration(tlsConfiguration: tls)
ahcConfiguration.httpVersion = .http1Only
let client = HTTPClient(eventLoopGroupProvider: .shared(group), configuration: ahcConfiguration)

@Sendable func sessionGet(close: Bool, cached: Bool = true) async throws {
    let request = Request(url: URL(string: url)!, headers: close ? [("connection", "close")] : [])
    let response = try await (cached ? session : uncached).data(for: request)
    precondition(response.statusCode == 200)
}

@Sendable func baselineGet(close: Bool) async throws {
    var request = HTTPClientRequest(url: url)
    if close { request.headers.add(name: "connection", value: "close") }
    let response = try await client.execute(request, timeout: .seconds(30))
    _ = try await response.body.collect(upTo: 1 << 20)
    precondition(response.status.code == 200)
}

print("swift-trust Session vs AsyncHTTPClient 1.37 — same server, same run; median of \(rounds) alternating rounds of \(seconds) s; HTTP/1.1, TLS 1.3, P-256")
print("figure                                 Session    AsyncHTTPClient   ratio")
for clients in [1, 2] {
    let (ours, theirs) = try await compare(clients: clients, { try await sessionGet(close: false) }, { try await baselineGet(close: false) })
    row("keep-alive GET, \(clients) client\(clients > 1 ? "s" : "")", ours, theirs)
}
for clients in [1, 2] {
    let (ours, theirs) = try await compare(clients: clients, { try await sessionGet(close: true) }, { try await baselineGet(close: true) })
    row("new connection + GET, \(clients) client\(clients > 1 ? "s" : "")", ours, theirs)
}

for clients in [1, 2] {
    let (ours, theirs) = try await compare(clients: clients, { try await sessionGet(close: true, cached: false) }, { try await baselineGet(close: true) })
    row("… evaluation cache off, \(clients) client\(clients > 1 ? "s" : "")", ours, theirs)
}

try await client.shutdown()
await uncached.shutdown()
await session.shutdown()
try await server.shutdown()

import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import NIOPosix
import PinnedGRPC
import Trust
import TrustGRPC
import TrustLab

// TrustGRPC (the server's chain decided by a pinned TrustEvaluator in the handshake) against the gRPC transport's
// own verification (NIOSSL/BoringSSL, the lab roots as trust roots, the host name checked), side by side in one
// run, against the same in-process echo server over loopback: new connections per second, each a new client
// transport, its TLS handshake and one unary RPC. Our rows: pins with the evaluation cache off (every handshake
// evaluates) and on (the second connection onwards answered from the cache, inside the handshake); and, for what
// a GRPCClientTrust costs to make (its NIOSSL context), one made per connection. Ratios ours / transport's are what
// to read; absolute rates include the server sharing the same cores.
//
// Usage: grpc-trust-bench [SECONDS_PER_ROUND] [ROUNDS]   (release build: swift run -c release grpc-trust-bench)

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}

let arguments = Array(CommandLine.arguments.dropFirst())
let seconds = Double(arguments.first ?? "") ?? 1
let rounds = max(1, Int(arguments.dropFirst().first ?? "") ?? 7)
let pki = try LabPKI.make()
let host = "good.lab.test"
guard let good = pki.servers["good"], let chain = pki.presentedChains["good"] else { throw BenchFailure(description: "no lab server good") }
let pins: Set<SPKIPin> = [pki.intermediate.certificate.spkiPin, try SPKIPin(digest: [UInt8](repeating: 7, count: 32))]

let server = try await EchoServer.start(
    certificateChain: chain.map { .bytes($0.derBytes, format: .der) }, privateKey: .bytes(Array(good.privateKeyPEM.utf8), format: .pem))
let target: ResolvableTargets.IPv4 = .ipv4(address: "127.0.0.1", port: server.port)

@Sendable func makeTrust(cache: TrustEvaluationCache?) throws -> GRPCClientTrust {
    try GRPCClientTrust(host: host, evaluator: try PublicKeysTrustEvaluator(pins: pins, anchors: .only(pki.trustedRoots)), cache: cache)
}

/// The transport's own TLS: BoringSSL verifies against the lab roots and checks the name (`:authority` and SNI).
let defaultSecurity = HTTP2ClientTransport.Posix.TransportSecurity.tls {
    $0.trustRoots = .certificates(pki.trustedRoots.map { .bytes($0.derBytes, format: .der) })
    $0.serverCertificateVerification = .fullVerification
}
let defaultConfig = HTTP2ClientTransport.Posix.Config.defaults { $0.http2.authority = host }

/// A new transport (so a new connection and handshake), one unary RPC, the transport shut down.
@Sendable func call(_ transport: HTTP2ClientTransport.Posix) async throws {
    let answer = try await withGRPCClient(transport: transport) { try await EchoClient($0).get("ping") }
    guard answer == "anonymous: ping" else { throw BenchFailure(description: "unexpected answer \(answer)") }
}

func measure(_ connect: @escaping @Sendable () async throws -> Void) async throws -> Double {
    for _ in 0..<20 { try await connect() }  // warm-up: code paths, caches
    let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    let start = ContinuousClock.now
    var count = 0
    while ContinuousClock.now < deadline && count < 1_000_000 {
        try await connect()
        count += 1
    }
    let elapsed = start.duration(to: .now)
    return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

/// Medians of alternating rounds: ours, then the transport's, `rounds` times.
func compare(_ ours: @escaping @Sendable () async throws -> Void, _ theirs: @escaping @Sendable () async throws -> Void) async throws -> (Double, Double) {
    var a: [Double] = []
    var b: [Double] = []
    for _ in 0..<rounds {
        a.append(try await measure(ours))
        b.append(try await measure(theirs))
    }
    return (a.sorted()[a.count / 2], b.sorted()[b.count / 2])
}

func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0) }

func row(_ name: String, _ ours: Double, _ baseline: Double) {
    print(pad(name, 52) + String(format: "%10.0f/s   ", ours) + String(format: "%10.0f/s   ", baseline) + String(format: "%7.3f×", ours / max(baseline, 1e-9)))
}

let uncached = try makeTrust(cache: nil)
let cached = try makeTrust(cache: TrustEvaluationCache())
@Sendable func transportDefault() async throws {
    try await call(try HTTP2ClientTransport.Posix(target: target, transportSecurity: defaultSecurity, config: defaultConfig))
}

print("TrustGRPC vs the gRPC transport's own TLS verification — same server, same run; median of \(rounds) alternating rounds of \(seconds) s")
print(pad("figure (new connection + one unary RPC)", 52) + "  TrustGRPC      transport's own   ratio")
let rows: [(String, @Sendable () async throws -> Void)] = [
    ("pins, evaluation cache off", { try await call(try uncached.makeTransport(port: server.port, connectingTo: target)) }),
    ("pins, evaluation cache on", { try await call(try cached.makeTransport(port: server.port, connectingTo: target)) }),
    ("pins, cache off, a GRPCClientTrust per connection", { try await call(try makeTrust(cache: nil).makeTransport(port: server.port, connectingTo: target)) }),
]
for (name, ours) in rows {
    let (a, b) = try await compare(ours, transportDefault)
    row(name, a, b)
}
await server.stop()

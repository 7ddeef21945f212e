import AllocationCounter
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Trust
import TrustHTTP
import TrustLab
import X509

// TrustHTTPClient (trust evaluation in the handshake + an SPKI pin) against AsyncHTTPClient (custom
// trustRoots, BoringSSL's verification, no pinning), side by side in one run, against the same
// in-process TrustLab server over loopback:
// - keep-alive requests/s and new-connection (handshake + request) requests/s, 1 and 2 concurrent
//   clients, HTTP/1.1 and HTTP/2 (a new connection per request: `GET /close` ends the connection —
//   `connection: close` on HTTP/1.1, a graceful GOAWAY on HTTP/2 — so both clients reconnect);
// - heap allocations per keep-alive request (glibc's allocator interposed, see AllocationCounter);
// - resident memory for 1,000 pooled idle HTTP/1.1 connections, each client in a fresh process;
// - a streamed 1 GiB body (BENCH_STREAM_BYTES to change it), HTTP/1.1 and HTTP/2: throughput and peak RSS, each
//   client in a fresh process, the server writing only as the connection takes it.
// Ratios TrustHTTPClient / AsyncHTTPClient are what to read; absolute rates include the server sharing
// the same cores.
//
// Usage: trust-http-bench [SECONDS_PER_ROUND] [ROUNDS] [IDLE_CONNECTIONS]
//        trust-http-bench idle session|ahc PORT ROOTS.pem PIN COUNT   (the child of the memory figure)
//        trust-http-bench stream session|ahc PORT ROOTS.pem PIN BYTES HTTP/1.1|HTTP/2   (the streaming figure's child)
//        trust-http-bench gets session|ahc PORT ROOTS.pem PIN COUNT HTTP/1.1|HTTP/2 [CLIENTS]   (for profilers)
//        trust-http-bench serve FOLDER SECONDS   (the lab server for `gets` and `idle`, in a process of its own)
// In the `idle` child, BENCH_MALLOC_STATS=1 prints each malloc arena's figures and BENCH_HEAP_SITES=N the N
// call sites holding the most heap allocated during the burst and still held (per connection): where
// an idle connection's memory goes; with BENCH_HEAP_PEAK=1, the sites that held the most at once during
// the burst (its transient memory). Valgrind's heap tools cannot run this binary.
// BENCH_ONLY=TEXT[|TEXT…] runs only the figures whose name holds one of the texts: "HTTP/2 new connection",
// "cache off", "keep-alive", "idle", "streamed body"… In `gets`, BENCH_PATH=/close makes each GET a new connection, and
// BENCH_CACHE=off turns the session's evaluation cache off.
// BENCH_ALLOC_SITES=N prints, after each TrustHTTPClient allocation figure, the N call sites (stacks) that made the most
// allocations per request during its loop (the in-process server's included), as module+offset: pipe the output
// through Benchmarks/symbolize-sites.py. Tracking slows the loop; the figure itself is counted as without it.

enum Client: String {
    case session
    case ahc
}

enum Protocol: String {
    case http1 = "HTTP/1.1"
    case http2 = "HTTP/2"
}

func makeSession(roots: [Certificate], pin: SPKIPin, protocol proto: Protocol, cache: Bool = true, idle: Int = 8) throws -> TrustHTTPClient {
    var configuration = TrustHTTPClientConfiguration()
    configuration.serverTrust = try PublicKeysTrustEvaluator(pins: [pin], anchors: .only(roots))
    configuration.httpVersion = proto == .http1 ? .http1Only : .automatic
    configuration.maximumIdleConnectionsPerOrigin = idle
    configuration.maximumConnectionsPerOrigin = idle  // as AsyncHTTPClient's soft limit below
    configuration.idleTimeout = .seconds(120)
    if !cache { configuration.evaluationCache = nil }
    return try TrustHTTPClient(configuration: configuration)
}

func makeHTTPClient(roots: [Certificate], protocol proto: Protocol, idle: Int = 8) throws -> HTTPClient {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .certificates(try roots.map { try NIOSSLCertificate(bytes: $0.derBytes, format: .der) })
    tls.applicationProtocols = proto == .http1 ? ["http/1.1"] : ["h2", "http/1.1"]
    var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
    configuration.httpVersion = proto == .http1 ? .http1Only : .automatic
    configuration.connectionPool = HTTPClient.Configuration.ConnectionPool(idleTimeout: .seconds(120), concurrentHTTP1ConnectionsPerHostSoftLimit: idle)
    return HTTPClient(eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton), configuration: configuration)
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}

@Sendable func sessionGet(_ session: TrustHTTPClient, _ url: String) async throws {
    guard let target = URL(string: url) else { throw BenchFailure(description: "bad URL \(url)") }
    let response = try await session.data(for: TrustHTTPClientRequest(url: target))
    guard response.statusCode == 200 else { throw BenchFailure(description: "Session: status \(response.statusCode)") }
}

@Sendable func clientGet(_ client: HTTPClient, _ url: String) async throws {
    let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
    _ = try await response.body.collect(upTo: 1 << 20)
    guard response.status.code == 200 else { throw BenchFailure(description: "AsyncHTTPClient: status \(response.status.code)") }
}

/// `/proc/self/status` figures in KiB (0 where unavailable).
func memoryKiB(_ field: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? 0
    }
    return 0
}

/// Open sockets of this process (each pooled connection holds one).
func openSockets() -> Int {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.filter { ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) ?? "").hasPrefix("socket:") }.count
}

// MARK: The memory figure's child: open COUNT connections at once, leave them idle in the pool.

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "idle" {
    guard arguments.count == 6, let client = Client(rawValue: arguments[1]), let port = Int(arguments[2]), let count = Int(arguments[5]),
        let roots = try? CertificateSource.certificates(atPath: arguments[3]), !roots.isEmpty,
        let pin = try? SPKIPin(parsing: arguments[4])
    else {
        print("usage: trust-http-bench idle session|ahc PORT ROOTS.pem PIN COUNT")
        exit(2)
    }
    let base = "https://127.0.0.1:\(port)"
    let session = client == .session ? try makeSession(roots: roots, pin: pin, protocol: .http1, idle: count) : nil
    let httpClient = client == .ahc ? try makeHTTPClient(roots: roots, protocol: .http1, idle: count) : nil
    let get: @Sendable (String) async throws -> Void = { url in
        if let session { try await sessionGet(session, url) } else if let httpClient { try await clientGet(httpClient, url) }
    }
    try await get(base + "/")
    let before = memoryKiB("VmRSS")
    let heapBefore = Int(allocation_counter_heap_in_use())
    let socketsBefore = openSockets()
    let sites = ProcessInfo.processInfo.environment["BENCH_HEAP_SITES"].flatMap { Int($0) }
    if sites != nil { allocation_counter_sites_start() }
    // Each request waits 500 ms at the server, so COUNT requests at once need COUNT connections.
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<count { group.addTask { try await get(base + "/slow?ms=500") } }
        try await group.waitForAll()
    }
    try await Task.sleep(for: .milliseconds(300))
    let heapInUse = Int(allocation_counter_heap_in_use())
    let heapFree = Int(allocation_counter_heap_free())
    let after = memoryKiB("VmRSS")
    // What the heap holds (in use) and keeps free but mapped, then RSS once malloc has returned its
    // free pages to the kernel: RSS growth counts both memory held for the connections and the
    // burst's transient memory that glibc keeps for reuse.
    allocation_counter_trim()
    let heapGrowth = (heapInUse - heapBefore) / 1024
    let figures: [Int] = [before, after, memoryKiB("VmHWM"), openSockets() - socketsBefore, heapGrowth, heapFree / 1024, memoryKiB("VmRSS")]
    FileHandle.standardOutput.write(Data(("RESULT " + figures.map(String.init).joined(separator: " ") + "\n").utf8))
    if ProcessInfo.processInfo.environment["BENCH_MALLOC_STATS"] != nil { allocation_counter_print_arenas() }
    if let sites { allocation_counter_sites_report(Int32(sites), Int64(count), ProcessInfo.processInfo.environment["BENCH_HEAP_PEAK"] != nil ? 1 : 0) }
    exit(0)
}

// MARK: A profiling child: COUNT keep-alive GETs in each of CLIENTS loops (default 1) sharing one client, against a
// server in another process (`trust lab`), so that a profiler (perf, a heap profiler) sees one client alone.

if arguments.first == "gets" {
    guard arguments.count == 7 || arguments.count == 8, let client = Client(rawValue: arguments[1]), let port = Int(arguments[2]),
        let count = Int(arguments[5]), let proto = Protocol(rawValue: arguments[6]), let loops = Int(arguments.count == 8 ? arguments[7] : "1"),
        loops > 0, let roots = try? CertificateSource.certificates(atPath: arguments[3]), !roots.isEmpty, let pin = try? SPKIPin(parsing: arguments[4])
    else {
        print("usage: trust-http-bench gets session|ahc PORT ROOTS.pem PIN COUNT HTTP/1.1|HTTP/2 [CLIENTS]")
        exit(2)
    }
    let url = "https://127.0.0.1:\(port)" + (ProcessInfo.processInfo.environment["BENCH_PATH"] ?? "/")
    let cache = ProcessInfo.processInfo.environment["BENCH_CACHE"] != "off"
    let session = client == .session ? try makeSession(roots: roots, pin: pin, protocol: proto, cache: cache) : nil
    let httpClient = client == .ahc ? try makeHTTPClient(roots: roots, protocol: proto) : nil
    let get: @Sendable () async throws -> Void = {
        if let session { try await sessionGet(session, url) } else if let httpClient { try await clientGet(httpClient, url) }
    }
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<loops { group.addTask { for _ in 0..<count { try await get() } } }
        try await group.waitForAll()
    }
    let elapsed = start.duration(to: .now)
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print(String(format: "%@: %d GETs in %.3f s, %.0f/s", client.rawValue, count * loops, seconds, Double(count * loops) / seconds))
    exit(0)
}

// MARK: The streaming figure's child: GET /bytes/BYTES once and read the body as it streams, counting it; prints the
// seconds from the request to the body's end and the process's peak RSS.

if arguments.first == "stream" {
    guard arguments.count == 7, let client = Client(rawValue: arguments[1]), let port = Int(arguments[2]), let bytes = Int(arguments[5]),
        let proto = Protocol(rawValue: arguments[6]), let roots = try? CertificateSource.certificates(atPath: arguments[3]), !roots.isEmpty,
        let pin = try? SPKIPin(parsing: arguments[4])
    else {
        print("usage: trust-http-bench stream session|ahc PORT ROOTS.pem PIN BYTES HTTP/1.1|HTTP/2")
        exit(2)
    }
    let base = "https://127.0.0.1:\(port)"
    let session = client == .session ? try makeSession(roots: roots, pin: pin, protocol: proto) : nil
    let httpClient = client == .ahc ? try makeHTTPClient(roots: roots, protocol: proto) : nil
    // A first request opens the connection: the figure is the transfer, not the handshake.
    if let session { try await sessionGet(session, base + "/") } else if let httpClient { try await clientGet(httpClient, base + "/") }
    let start = ContinuousClock.now
    var received = 0
    if let session, let target = URL(string: base + "/bytes/\(bytes)") {
        let response = try await session.bytes(for: TrustHTTPClientRequest(url: target))
        for try await buffer in response.body { received += buffer.readableBytes }
    } else if let httpClient {
        var request = HTTPClientRequest(url: base + "/bytes/\(bytes)")
        request.method = .GET
        let response = try await httpClient.execute(request, timeout: .seconds(600))
        for try await buffer in response.body { received += buffer.readableBytes }
    }
    let elapsed = start.duration(to: .now)
    guard received == bytes else { throw BenchFailure(description: "\(client.rawValue): received \(received) of \(bytes) bytes") }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print("RESULT \(seconds) \(memoryKiB("VmHWM"))")
    exit(0)
}

// MARK: A server for the profiling children: the bench's own lab server (release build) in a process of its own,
// so that a profiler of `gets` or `idle` sees the client alone. Prints the port, and writes roots.pem and the
// pin to FOLDER.
if arguments.first == "serve" {
    guard arguments.count == 3, let duration = Int(arguments[2]) else {
        print("usage: trust-http-bench serve FOLDER SECONDS")
        exit(2)
    }
    let pki = try LabPKI.make()
    let folder = URL(fileURLWithPath: arguments[1])
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try pki.trustedRoots.map(\.pemString).joined().write(to: folder.appendingPathComponent("roots.pem"), atomically: true, encoding: .utf8)
    let server = try await LabServer.start("good", pki: pki, protocols: .http2AndHTTP1)
    print("port \(server.port) roots \(folder.appendingPathComponent("roots.pem").path) pin \(pki.intermediate.certificate.spkiPin)")
    fflush(nil)
    try await Task.sleep(for: .seconds(duration))
    try await server.shutdown()
    exit(0)
}

// MARK: The run

let seconds = Double(arguments.first ?? "") ?? 1
let rounds = Int(arguments.dropFirst().first ?? "") ?? 7
let idleCount = Int(arguments.dropFirst(2).first ?? "") ?? 1000
let pki = try LabPKI.make()
let roots = pki.trustedRoots
let pin = pki.intermediate.certificate.spkiPin

/// Requests/s of `clients` concurrent loops; `request` gets its loop's index (0 or 1).
func measure(clients: Int, _ request: @escaping @Sendable (Int) async throws -> Void) async throws -> Double {
    for index in 0..<clients { for _ in 0..<20 { try await request(index) } }  // warm-up: connections, caches
    let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    let start = ContinuousClock.now
    let total = try await withThrowingTaskGroup(of: Int.self) { group in
        for index in 0..<clients {
            group.addTask {
                var count = 0
                while ContinuousClock.now < deadline && count < 1_000_000 {
                    try await request(index)
                    count += 1
                }
                return count
            }
        }
        return try await group.reduce(0, +)
    }
    let elapsed = start.duration(to: .now)
    return Double(total) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

/// Rounds alternate (ours, theirs, ours, …) so drift on a shared machine hits both alike; the
/// figure is the median round.
func compare(clients: Int, _ ours: @escaping @Sendable (Int) async throws -> Void, _ theirs: @escaping @Sendable (Int) async throws -> Void) async throws -> (
    Double, Double
) {
    var a: [Double] = []
    var b: [Double] = []
    for _ in 0..<rounds {
        a.append(try await measure(clients: clients, ours))
        b.append(try await measure(clients: clients, theirs))
    }
    return (a.sorted()[a.count / 2], b.sorted()[b.count / 2])
}

func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0) }

func row(_ name: String, _ session: Double, _ baseline: Double, unit: String = "/s", format: String = "%10.0f") {
    print(
        pad(name, 46) + String(format: format, session) + pad(unit, 6) + String(format: format, baseline) + pad(unit, 6)
            + String(format: "%7.3f×", session / max(baseline, 1e-9)))
}

/// BENCH_ONLY=TEXT[|TEXT…] runs only the figures whose name contains one of the texts ("HTTP/2 new", "idle").
let only = ProcessInfo.processInfo.environment["BENCH_ONLY"].map { $0.split(separator: "|").map(String.init) } ?? []
func wanted(_ name: String) -> Bool { only.isEmpty || only.contains { name.contains($0) } }

/// Compares and prints one figure, unless BENCH_ONLY leaves it out; `label` is its row's text when not `name`.
func figure(
    _ name: String, label: String? = nil, clients: Int, _ ours: @escaping @Sendable (Int) async throws -> Void,
    _ theirs: @escaping @Sendable (Int) async throws -> Void
) async throws {
    guard wanted(name) else { return }
    let (session, baseline) = try await compare(clients: clients, ours, theirs)
    row(label ?? name, session, baseline)
}

// The server runs on an event loop of its own. On the clients' shared loops, a connection's client and server ends
// landed on the same thread or on two, by chance, once per connection: a one-connection figure (HTTP/1.1
// keep-alive, 1 client) read 1.17× and 0.95× in back-to-back runs of the same binary; with its own loop, 1.10–1.26×
// in four.
let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let server = try await LabServer.start("good", pki: pki, protocols: .http2AndHTTP1, group: serverGroup)
let base = "https://127.0.0.1:\(server.port)"

print("swift-trust Session vs AsyncHTTPClient 1.37 — same server, same run; median of \(rounds) alternating rounds of \(seconds) s; TLS 1.3, P-256")
print(pad("figure", 46) + "   Session          AsyncHTTPClient   ratio")
for proto in [Protocol.http1, .http2] {
    // Two of each, so that on HTTP/2 the second loop's request never shares the first loop's
    // connection while the server is ending it (GET /close); keep-alive loops share the first.
    let sessions = [try makeSession(roots: roots, pin: pin, protocol: proto), try makeSession(roots: roots, pin: pin, protocol: proto)]
    let uncached = [
        try makeSession(roots: roots, pin: pin, protocol: proto, cache: false), try makeSession(roots: roots, pin: pin, protocol: proto, cache: false),
    ]
    let clients = [try makeHTTPClient(roots: roots, protocol: proto), try makeHTTPClient(roots: roots, protocol: proto)]
    let session = sessions[0]
    let client = clients[0]
    for count in [1, 2] {
        try await figure(
            "\(proto.rawValue) keep-alive GET, \(count) client\(count > 1 ? "s" : "")", clients: count,
            { _ in try await sessionGet(session, base + "/") }, { _ in try await clientGet(client, base + "/") })
    }
    for count in [1, 2] {
        try await figure(
            "\(proto.rawValue) new connection + GET, \(count) client\(count > 1 ? "s" : "")", clients: count,
            { try await sessionGet(sessions[$0], base + "/close") }, { try await clientGet(clients[$0], base + "/close") })
    }
    for count in [1, 2] {
        // The name says the protocol for BENCH_ONLY; the row shows it under its protocol's rows.
        try await figure(
            "\(proto.rawValue) new connection + GET, evaluation cache off, \(count) client\(count > 1 ? "s" : "")",
            label: "  … evaluation cache off, \(count) client\(count > 1 ? "s" : "")", clients: count,
            { try await sessionGet(uncached[$0], base + "/close") }, { try await clientGet(clients[$0], base + "/close") })
    }
    // Heap allocations per keep-alive request, one client, after a warm-up. With `sites`, the call sites
    // that made the most allocations during the loop are printed after it (the server's included).
    let requests = 2000
    func allocations(sites: Int? = nil, _ request: @Sendable () async throws -> Void) async throws -> Double {
        for _ in 0..<50 { try await request() }
        if sites != nil { allocation_counter_sites_start() }  // before the count: its first call loads the unwinder
        let start = allocation_counter_count()
        for _ in 0..<requests { try await request() }
        let made = allocation_counter_count() - start
        if let sites { allocation_counter_sites_report(Int32(sites), Int64(requests), 2) }
        return Double(made) / Double(requests)
    }
    if wanted("\(proto.rawValue) allocations per keep-alive GET") {
        let sites = ProcessInfo.processInfo.environment["BENCH_ALLOC_SITES"].flatMap { Int($0) }
        let ourAllocations = try await allocations(sites: sites) { try await sessionGet(session, base + "/") }
        let theirAllocations = try await allocations { try await clientGet(client, base + "/") }
        row("\(proto.rawValue) allocations per keep-alive GET", ourAllocations, theirAllocations, unit: "", format: "%10.1f")
    }
    for client in clients { try await client.shutdown().get() }
    for session in sessions + uncached { await session.shutdown() }
}

// Memory: each client in its own process opens `idleCount` connections at once (the server holds
// every request 500 ms), then leaves them idle in its pool.
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trust-http-bench-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
let rootsFile = folder.appendingPathComponent("roots.pem")
try roots.map(\.pemString).joined().write(to: rootsFile, atomically: true, encoding: .utf8)
/// Runs this binary as a child with `arguments` and returns the numbers of the `RESULT` line it prints (`count` of them).
func childResult(_ arguments: [String], count: Int) throws -> [Double] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("RESULT ") }) else {
        throw BenchFailure(description: "the child \(arguments.prefix(2).joined(separator: " ")) printed no result: \(text)")
    }
    let numbers = line.split(separator: " ").dropFirst().compactMap { Double($0) }
    guard numbers.count == count else { throw BenchFailure(description: "unexpected child output \(line)") }
    return numbers
}
typealias IdleFigures = (before: Int, after: Int, peak: Int, sockets: Int, heapGrowth: Int, heapFree: Int, trimmed: Int)
func idleFigures(_ client: Client) throws -> IdleFigures {
    let numbers = try childResult(
        ["idle", client.rawValue, String(server.port), rootsFile.path, pin.description, String(idleCount)], count: 7
    ).map { Int($0) }
    return (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5], numbers[6])
}
// As many rounds as the rates, alternating, each child a fresh process; each figure is the median of its
// rounds (how the burst's memory lands in malloc's arenas varies from run to run by a few KiB per connection).
var idleRounds: (ours: [IdleFigures], theirs: [IdleFigures]) = ([], [])
for _ in 0..<(wanted("\(idleCount) idle HTTP/1.1 connections") ? rounds : 0) {
    idleRounds.ours.append(try idleFigures(.session))
    idleRounds.theirs.append(try idleFigures(.ahc))
}
let (oursRounds, theirsRounds) = idleRounds
func medianOf(_ figures: [IdleFigures], _ value: (IdleFigures) -> Double) -> Double {
    let sorted = figures.map(value).sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}
@MainActor func idleRow(_ name: String, format: String = "%10.1f", _ value: (IdleFigures) -> Double) {
    row(name, medianOf(oursRounds, value), medianOf(theirsRounds, value), unit: "", format: format)
}
// Streaming: each client in its own process reads one large body (1 GiB; BENCH_STREAM_BYTES to change it) as it
// streams, over HTTP/1.1 and HTTP/2; throughput and the process's peak RSS, median of the rounds.
let streamBytes = ProcessInfo.processInfo.environment["BENCH_STREAM_BYTES"].flatMap { Int($0) } ?? 1 << 30
func streamFigures(_ client: Client, _ proto: Protocol) throws -> (seconds: Double, peakKiB: Double) {
    let numbers = try childResult(
        ["stream", client.rawValue, String(server.port), rootsFile.path, pin.description, String(streamBytes), proto.rawValue], count: 2)
    return (numbers[0], numbers[1])
}
for proto in [Protocol.http1, .http2] where wanted("\(proto.rawValue) streamed body") {
    var ours: [(seconds: Double, peakKiB: Double)] = []
    var theirs: [(seconds: Double, peakKiB: Double)] = []
    for _ in 0..<rounds {
        ours.append(try streamFigures(.session, proto))
        theirs.append(try streamFigures(.ahc, proto))
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    let mebibytes = Double(streamBytes) / 1_048_576
    print("\(proto.rawValue) streamed body of \(streamBytes) bytes, median of \(rounds) rounds (each client in a fresh process)")
    row("  throughput (MiB/s)", median(ours.map { mebibytes / $0.seconds }), median(theirs.map { mebibytes / $0.seconds }), unit: "", format: "%10.1f")
    row("  peak RSS of the client process (MiB)", median(ours.map { $0.peakKiB / 1024 }), median(theirs.map { $0.peakKiB / 1024 }), unit: "", format: "%10.1f")
}

let perConnection: (IdleFigures, Int) -> Double = { Double($1) / Double(max(1, $0.sockets)) }
if !oursRounds.isEmpty {
    print("\(idleCount) idle HTTP/1.1 connections, median of \(rounds) rounds (each client in a fresh process)")
    idleRow("  sockets open", format: "%10.0f") { Double($0.sockets) }
    idleRow("  peak RSS of the client process (MiB)") { Double($0.peak) / 1024 }
    idleRow("  RSS growth per pooled connection (KiB)") { perConnection($0, $0.after - $0.before) }
    idleRow("  heap in use, growth per connection (KiB)") { perConnection($0, $0.heapGrowth) }
    idleRow("  heap free but kept by malloc (MiB)") { Double($0.heapFree) / 1024 }
    idleRow("  RSS growth per conn. after malloc_trim (KiB)") { perConnection($0, $0.trimmed - $0.before) }
    print(
        "  RSS growth per pooled connection, each round (KiB): Session "
            + oursRounds.map { String(format: "%.1f", perConnection($0, $0.after - $0.before)) }.joined(separator: " ")
            + "; AsyncHTTPClient " + theirsRounds.map { String(format: "%.1f", perConnection($0, $0.after - $0.before)) }.joined(separator: " "))
}
try? FileManager.default.removeItem(at: folder)
try await server.shutdown()
try await serverGroup.shutdownGracefully()

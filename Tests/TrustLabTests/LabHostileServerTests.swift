import Foundation
import NIOCore
import NIOPosix
import Testing
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// The hostile server itself does what its behaviours say — checked with curl (over TLS, with ALPN)
/// and with a raw TCP client reading the bytes and HTTP/2 frames (plain servers). The reaction of
/// our `TrustHTTPClient` to these servers is tested elsewhere.
@Suite("LabHostileServer: each behaviour, as seen by curl and by a raw client", .serialized, .timeLimit(.minutes(5)), .paced)
struct LabHostileServerTests {
    static let curl = "/usr/bin/curl"
    static let good = Lab.pki.servers["good"]!

    static func start(_ behaviour: LabHostileServer.Behaviour, trickleInterval: Duration = .milliseconds(200)) async throws -> LabHostileServer {
        try await LabHostileServer.startWithGoodCertificate(behaviour, trickleInterval: trickleInterval)
    }

    /// curl against `server` over TLS (the lab's roots trusted), `-m` seconds at most; (exit status, stdout, stderr).
    static func curl(_ server: LabHostileServer, seconds: Int = 20, _ arguments: [String] = [], path: String = "/") async throws -> (Int32, String, String) {
        try await run(
            curl,
            [
                "-sS", "-m", "\(seconds)", "--cacert", CLI.lab + "/roots.pem",
                "--resolve", "\(server.host):\(server.port):127.0.0.1",
            ] + arguments + [server.baseURL + path])
    }

    /// curl's exit status and bytes received after 3 s of `server`'s endless body. A run whose TLS handshake did not
    /// finish within the 3 s (`time_appconnect` 0: the machine was too busy to start, which says nothing about the
    /// server) is repeated, up to 3 times; every other outcome is returned as it is.
    static func downloadFor3Seconds(_ server: LabHostileServer) async throws -> (Int32, Int) {
        var last: (Int32, Int) = (0, 0)
        for _ in 0..<3 {
            let (status, out, _) = try await curl(server, seconds: 3, ["-o", "/dev/null", "-w", "%{size_download} %{time_appconnect}"])
            let fields = out.split(separator: " ")
            last = (status, fields.first.flatMap { Int($0) } ?? 0)
            guard fields.count == 2, let connected = Double(fields[1]), connected == 0 else { return last }
        }
        return last
    }

    /// Whether `server` has no open connection left within 20 s (its client has gone).
    static func forgetsItsConnections(_ server: LabHostileServer) async -> Bool {
        for _ in 0..<200 {
            if server.openConnectionCount == 0 { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    // MARK: HTTP/1.1, with curl

    @Test func hugeHeadIsRefusedByCurlAsTooLarge() async throws {
        let server = try await Self.start(.hugeHead)
        try await withTeardown({ await server.shutdown() }) {
            let (status, _, err) = try await Self.curl(server, ["-o", "/dev/null"])
            #expect(status == 56, "\(err)")
            #expect(err.contains("Too large response headers"), "\(err)")
        }
    }

    @Test(arguments: [LabHostileServer.Behaviour.manyHeaderFields, .longHeaderField])
    func largeHeadsAreRefusedByCurl(_ behaviour: LabHostileServer.Behaviour) async throws {
        let server = try await Self.start(behaviour)
        try await withTeardown({ await server.shutdown() }) {
            let (status, _, err) = try await Self.curl(server, ["-o", "/dev/null"])
            #expect(status != 0 && status != 28, "\(status) \(err)")
        }
    }

    @Test func hugeConnectReplyIsRefusedByCurlAsAProxy() async throws {
        let proxy = try await LabHostileServer.startPlain(.hugeConnectReply, host: "127.0.0.1")
        try await withTeardown({ await proxy.shutdown() }) {
            let (status, _, err) = try await run(Self.curl, ["-sS", "-m", "20", "-o", "/dev/null", "-x", proxy.baseURL, "https://good.lab.test/"])
            #expect(status != 0 && status != 28, "\(status) \(err)")
            #expect(proxy.connectionCount == 1)
        }
    }

    @Test func endlessBodyAnnouncesATrillionBytes() async throws {
        let server = try await Self.start(.endlessBody)
        try await withTeardown({ await server.shutdown() }) {
            let (status, _, err) = try await Self.curl(server, ["-o", "/dev/null", "--max-filesize", "1000000"])
            #expect(status == 63, "\(err)")  // CURLE_FILESIZE_EXCEEDED, from the content-length
            let (timedOut, downloaded) = try await Self.downloadFor3Seconds(server)
            #expect(timedOut == 28)
            #expect(downloaded > 64 * 1024, "\(downloaded)")
        }
    }

    @Test func endlessChunkedBodyNeverEnds() async throws {
        let server = try await Self.start(.endlessChunkedBody)
        try await withTeardown({ await server.shutdown() }) {
            let (status, downloaded) = try await Self.downloadFor3Seconds(server)
            #expect(status == 28)  // still receiving well-formed chunks when the time is up
            #expect(downloaded > 64 * 1024, "\(downloaded)")
        }
    }

    @Test func trickleHeadIsSlowButValid() async throws {
        // At 10 ms a byte the response (97 bytes) takes at least 0.96 s, however fast the machine.
        let fast = try await Self.start(.trickleHead, trickleInterval: .milliseconds(10))
        try await withTeardown({ await fast.shutdown() }) {
            let clock = ContinuousClock()
            let start = clock.now
            let (status, out, err) = try await Self.curl(fast, ["-i"])
            #expect(status == 0, "\(err)")
            #expect(out.hasPrefix("HTTP/1.1 200 OK\r\n") && out.hasSuffix("\r\n\r\nhi"), "\(out)")
            #expect(start.duration(to: clock.now) >= .milliseconds(900))  // 96 pauses of at least 10 ms
            // At the default pace, 2 seconds are not enough for the head.
            let slow = try await Self.start(.trickleHead)
            try await withTeardown({ await slow.shutdown() }) {
                let (timedOut, partial, _) = try await Self.curl(slow, seconds: 2, ["-i"])
                #expect(timedOut == 28)
                #expect(partial.isEmpty)  // curl writes no part of an unfinished head
            }
        }
    }

    @Test func trickleBodyAndStallAfterHeadSendAHeadThenAlmostNothing() async throws {
        for behaviour in [LabHostileServer.Behaviour.trickleBody, .stallAfterHead] {
            let server = try await Self.start(behaviour)
            try await withTeardown({ await server.shutdown() }) {
                let (status, out, _) = try await Self.curl(server, seconds: 5, ["-i"])
                #expect(status == 28)
                #expect(await Self.forgetsItsConnections(server))
                let parts = out.components(separatedBy: "\r\n\r\n")
                #expect(parts.first?.hasPrefix("HTTP/1.1 200 OK\r\n") == true, "\(out)")
                #expect(out.lowercased().contains(behaviour == .trickleBody ? "content-length: 1000000\r\n" : "content-length: 1000\r\n"))
                #expect(parts.count == 2 && parts[1].count < 100 && parts[1].allSatisfy { $0 == "x" }, "\(behaviour): \(out)")
            }
        }
    }

    @Test(arguments: [
        (LabHostileServer.Behaviour.redirectToFile, "file:///etc/passwd"), (.redirectToFTP, "ftp://127.0.0.1/x"),
        (.redirectToData, "data:text/plain,hi"),
    ])
    func redirectsPointElsewhere(_ behaviour: LabHostileServer.Behaviour, _ location: String) async throws {
        let server = try await Self.start(behaviour)
        try await withTeardown({ await server.shutdown() }) {
            let (status, out, err) = try await Self.curl(server, ["-i"])
            #expect(status == 0, "\(err)")
            #expect(out.hasPrefix("HTTP/1.1 302 Found\r\n"))
            #expect(out.contains("\r\nlocation: \(location)\r\n"), "\(out)")
        }
    }

    @Test func redirectLoopAlternatesBetweenTheTwoNamesForever() async throws {
        let server = try await Self.start(.redirectLoop)
        try await withTeardown({ await server.shutdown() }) {
            let (status, _, err) = try await Self.curl(server, ["-v", "-L", "--max-redirs", "6", "-o", "/dev/null"])
            #expect(status == 47, "\(err)")  // CURLE_TOO_MANY_REDIRECTS
            for hop in 1...6 {
                let host = hop % 2 == 1 ? "127.0.0.1" : "good.lab.test"
                #expect(err.contains("location: https://\(host):\(server.port)/loop/\(hop)"), "hop \(hop): \(err)")
            }
        }
    }

    // MARK: HTTP/1.1, raw bytes

    @Test func malformedHeadsCarryTheirBytes() async throws {
        let expected: [(LabHostileServer.Behaviour, String)] = [
            (.bareCRInHeader, "\r\nx-bare-cr: a\rb\r\n"),
            (.bareLFInHeaderValue, "\r\nx-bare-lf: a\nset-cookie: injected=1\n\nHTTP/1.1 200 OK\n"),
            (.nulInHeader, "\r\nx-nul: a\u{0}b\r\n"),
        ]
        for (behaviour, bytes) in expected {
            let server = try await LabHostileServer.startPlain(behaviour)
            try await withTeardown({ await server.shutdown() }) {
                let received = try await RawConnection.with(port: server.port) { connection in
                    try await connection.send(Array("GET / HTTP/1.1\r\nhost: plain.lab.test\r\n\r\n".utf8))
                    return try await connection.read { $0.count >= 2 && Array($0.suffix(2)) == Array("hi".utf8) }
                }
                let text = String(decoding: received, as: UTF8.self)
                #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
                #expect(text.contains(bytes), "\(behaviour): \(text.debugDescription)")
            }
        }
    }

    @Test func largeHeadsHaveTheirSizes() async throws {
        let get = Array("GET / HTTP/1.1\r\nhost: plain.lab.test\r\n\r\n".utf8)
        let ending = Array("content-length: 2\r\n\r\nhi".utf8)
        for behaviour in [LabHostileServer.Behaviour.hugeHead, .manyHeaderFields, .longHeaderField, .manyInformational] {
            let server = try await LabHostileServer.startPlain(behaviour)
            try await withTeardown({ await server.shutdown() }) {
                let received = try await RawConnection.with(port: server.port, seconds: 120) { connection in
                    try await connection.send(get)
                    return try await connection.read { $0.count >= ending.count && $0.suffix(ending.count).elementsEqual(ending) }
                }
                let text = String(decoding: received, as: UTF8.self)
                #expect(text.hasSuffix("\r\n\r\nhi"), "\(behaviour)")
                let lines = text.components(separatedBy: "\r\n")
                switch behaviour {
                case .hugeHead:
                    #expect(received.count >= 16_000_000)
                    #expect(lines.filter { $0.hasPrefix("x-filler-") && $0.count > 1000 }.count == 16 * 1024)
                case .manyHeaderFields:
                    #expect(lines.filter { $0.hasPrefix("x-f") }.count == 100_000)
                case .longHeaderField:
                    #expect(lines.first { $0.hasPrefix("x-long: ") }?.count == "x-long: ".count + (1 << 20))
                default:
                    #expect(lines.filter { $0 == "HTTP/1.1 100 Continue" }.count == 100_000)
                    #expect(text.hasSuffix("\r\n\r\nHTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nhi"))
                }
            }
        }
    }

    @Test func plainRedirectLoopServesManyRequestsOnOneConnection() async throws {
        let server = try await LabHostileServer.startPlain(.redirectLoop, host: "plain.lab.test")
        try await withTeardown({ await server.shutdown() }) {
            let heads = try await RawConnection.with(port: server.port) { connection in
                var heads: [String] = []
                for host in ["plain.lab.test", "127.0.0.1", "plain.lab.test"] {
                    try await connection.send(Array("GET /loop/\(heads.count) HTTP/1.1\r\nhost: \(host):\(server.port)\r\n\r\n".utf8))
                    let received = try await connection.read { String(decoding: $0, as: UTF8.self).components(separatedBy: "\r\n\r\n").count > heads.count + 1 }
                    heads = Array(String(decoding: received, as: UTF8.self).components(separatedBy: "\r\n\r\n").dropLast())
                }
                return heads
            }
            #expect(heads.count == 3)
            #expect(heads.first?.contains("location: http://127.0.0.1:\(server.port)/loop/1") == true, "\(heads)")
            #expect(heads.dropFirst().first?.contains("location: http://plain.lab.test:\(server.port)/loop/2") == true, "\(heads)")
            #expect(server.connectionCount == 1)
        }
    }

    @Test func endlessBodyIsBoundedByTheByteLimit() async throws {
        let server = try await LabHostileServer.startPlain(.endlessBody, byteLimit: 1 << 20)
        try await withTeardown({ await server.shutdown() }) {
            let received = try await RawConnection.with(port: server.port) { connection in
                try await connection.send(Array("GET / HTTP/1.1\r\nhost: plain.lab.test\r\n\r\n".utf8))
                return try await connection.read { _ in false }  // until the server closes
            }
            #expect(received.count == 1 << 20)
        }
    }

    // MARK: HTTP/2

    @Test func curlOverHTTP2FailsOnEndlessContinuation() async throws {
        let server = try await Self.start(.endlessContinuation)
        try await withTeardown({ await server.shutdown() }) {
            let (status, _, err) = try await Self.curl(server, ["--http2", "-o", "/dev/null", "-v"])
            #expect(err.contains("ALPN: server accepted h2"), "\(err)")
            #expect(status != 0 && status != 28, "\(status) \(err)")
        }
    }

    @Test func floodsSendTheirFramesForever() async throws {
        let checks: [(LabHostileServer.Behaviour, ([RawFrame]) -> Bool)] = [
            (.settingsFlood, { frames in frames.filter { $0.type == 4 && $0.flags == 0 }.count > 100 }),
            (.pingFlood, { frames in frames.filter { $0.type == 6 && $0.flags == 0 }.count > 100 }),
            (
                .windowUpdateFlood,
                { frames in
                    let updates = frames.filter { $0.type == 8 }
                    return updates.count > 100 && Set(updates.map(\.stream)) == [0, 1] && updates.allSatisfy { $0.payload == [0, 0, 0, 1] }
                }
            ),
            (
                .resetStreamFlood,
                { frames in
                    let resets = frames.filter { $0.type == 3 }
                    return resets.count > 100 && resets.first?.stream == 1 && resets.contains { $0.stream == 2 } && resets.contains { $0.stream == 99 }
                }
            ),
            (
                .endlessContinuation,
                { frames in
                    guard let headers = frames.firstIndex(where: { $0.type == 1 }) else { return false }
                    let rest = frames[(headers + 1)...]
                    return frames[headers].flags & 0x4 == 0 && rest.count > 20 && rest.allSatisfy { $0.type == 9 && $0.flags & 0x4 == 0 }
                }
            ),
            (
                .goAwayLoop,
                { frames in
                    let lastStreams = frames.filter { $0.type == 7 }.map { $0.payload.prefix(4).reduce(0) { $0 << 8 | UInt32($1) } }
                    return lastStreams.count > 100 && lastStreams.contains(0) && lastStreams.contains(0x7FFF_FFFF)
                }
            ),
            (
                .endlessDataIgnoringFlowControl,
                { frames in
                    frames.filter { $0.type == 0 && $0.stream == 1 }.reduce(0) { $0 + $1.payload.count } > 4 * 65_535
                }
            ),
        ]
        for (behaviour, done) in checks {
            let server = try await LabHostileServer.startPlain(behaviour)
            try await withTeardown({ await server.shutdown() }) {
                let frames = try await RawConnection.with(port: server.port) { connection in
                    try await connection.send(RawFrame.request)
                    return try await connection.readFrames(until: done)
                }
                #expect(done(frames), "\(behaviour): \(frames.prefix(20))")
                #expect(frames.first?.type == 4, "\(behaviour): the server preface is a SETTINGS frame")
                #expect(await Self.forgetsItsConnections(server), "\(behaviour): a connection outlived its client")
            }
        }
    }

    @Test func hugeHeaderTableAnnouncesAndUpdatesATableOf4GiB() async throws {
        let server = try await LabHostileServer.startPlain(.hugeHeaderTable)
        try await withTeardown({ await server.shutdown() }) {
            let frames = try await RawConnection.with(port: server.port) { connection in
                try await connection.send(RawFrame.request)
                return try await connection.readFrames { $0.last?.type == 0 }
            }
            #expect(frames.first?.type == 4 && frames.first?.payload == [0, 1, 0xFF, 0xFF, 0xFF, 0xFF])  // SETTINGS_HEADER_TABLE_SIZE
            let block = frames.filter { $0.type == 1 || $0.type == 9 }
            #expect(block.first?.type == 1 && block.first?.payload.prefix(6) == [0x3F, 0xE0, 0xFF, 0xFF, 0xFF, 0x0F])  // size update to 2^32−1
            #expect(block.count == 1025 && block.last?.flags == 0x4)
            #expect(block.dropFirst().allSatisfy { $0.payload.first == 0x40 && $0.payload.suffix(32).allSatisfy { $0 == 0xBE } })
            #expect(frames.last?.type == 0 && frames.last?.flags == 0x1 && frames.last?.payload == Array("hi".utf8))
        }
    }

    @Test func politeEndlessDataKeepsToTheClientsWindows() async throws {
        let server = try await LabHostileServer.startPlain(.endlessData)
        try await withTeardown({ await server.shutdown() }) {
            func data(_ frames: [RawFrame]) -> Int { frames.filter { $0.type == 0 }.reduce(0) { $0 + $1.payload.count } }
            func pingAcks(_ frames: [RawFrame]) -> Int { frames.filter { $0.type == 6 && $0.flags == 1 }.count }
            let (first, second) = try await RawConnection.with(port: server.port) { connection in
                try await connection.send(RawFrame.request)
                _ = try await connection.readFrames { data($0) >= 65_535 }
                // A PING's ACK comes after whatever DATA the server would have sent before it.
                try await connection.send(RawFrame.frame(type: 6, stream: 0, payload: Array(repeating: 7, count: 8)))
                let first = data(try await connection.readFrames { pingAcks($0) == 1 })
                let increment: [UInt8] = [0, 1, 0x86, 0xA0]  // 100,000
                try await connection.send(RawFrame.frame(type: 8, stream: 0, payload: increment) + RawFrame.frame(type: 8, stream: 1, payload: increment))
                _ = try await connection.readFrames { data($0) >= 165_535 }
                try await connection.send(RawFrame.frame(type: 6, stream: 0, payload: Array(repeating: 8, count: 8)))
                return (first, data(try await connection.readFrames { pingAcks($0) == 2 }))
            }
            #expect(first == 65_535)
            #expect(second == 165_535)
        }
    }

    @Test func everyBehaviourHasASummaryAndServersShutDownWithOpenConnections() async throws {
        #expect(Set(LabHostileServer.Behaviour.allCases.map(\.summary)).count == LabHostileServer.Behaviour.allCases.count)
        let server = try await Self.start(.stallAfterHead)
        let (status, _, _) = try await Self.curl(server, seconds: 1)
        #expect(status == 28)
        #expect(server.url(path: "/x").absoluteString == "https://good.lab.test:\(server.port)/x")
        await server.shutdown()
        #expect(server.openConnectionCount == 0)
    }
}

/// A frame as read off the wire (RFC 9113 §4.1).
struct RawFrame: CustomStringConvertible {
    var type: UInt8
    var flags: UInt8
    var stream: UInt32
    var payload: [UInt8]

    var description: String { "type \(type) flags \(flags) stream \(stream) length \(payload.count)" }

    /// The complete frames in `bytes` from `index` on (a server's preface is a frame); `index` moves past them.
    static func parse(_ bytes: [UInt8], from index: inout Int) -> [RawFrame] {
        var frames: [RawFrame] = []
        while bytes.count - index >= 9 {
            let length = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            guard bytes.count - index >= 9 + length else { break }
            let stream = bytes[(index + 5)..<(index + 9)].reduce(0) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
            frames.append(RawFrame(type: bytes[index + 3], flags: bytes[index + 4], stream: stream, payload: Array(bytes[(index + 9)..<(index + 9 + length)])))
            index += 9 + length
        }
        return frames
    }

    static func frame(type: UInt8, flags: UInt8 = 0, stream: UInt32, payload: [UInt8]) -> [UInt8] {
        let length = payload.count
        return [
            UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags,
            UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF),
        ] + payload
    }

    /// The client preface, an empty SETTINGS and a GET on stream 1 (HPACK static entries, RFC 7541 Appendix A).
    static let request: [UInt8] =
        Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + frame(type: 4, stream: 0, payload: [])
        + frame(type: 1, flags: 0x5, stream: 1, payload: [0x82, 0x86, 0x84, 0x41, 9] + Array("127.0.0.1".utf8))
}

/// A TCP connection to 127.0.0.1 for byte-level checks, closed after `with`'s body or after a time limit.
final class RawConnection {
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private var received: [UInt8] = []
    private var frames: [RawFrame] = []
    private var parsed = 0

    private init(outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator) {
        self.outbound = outbound
        self.inbound = inbound
    }

    /// Connects to 127.0.0.1:`port`, runs `body`, closes; after `seconds` the connection is closed under the body.
    static func with<T: Sendable>(port: Int, seconds: Int = 30, _ body: (RawConnection) async throws -> T) async throws -> T {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        let raw = channel.channel
        let watchdog = Task {
            try await Task.sleep(for: .seconds(seconds))
            try await raw.close()
        }
        defer { watchdog.cancel() }
        return try await channel.executeThenClose { inbound, outbound in
            try await body(RawConnection(outbound: outbound, inbound: inbound.makeAsyncIterator()))
        }
    }

    func send(_ bytes: [UInt8]) async throws {
        try await outbound.write(ByteBuffer(bytes: bytes))
    }

    /// Reads until `done` holds for everything received so far (or the connection closes); returns everything received.
    func read(until done: ([UInt8]) -> Bool) async throws -> [UInt8] {
        while !done(received), let chunk = try await inbound.next() {
            received += chunk.readableBytesView
        }
        return received
    }

    /// Reads until `done` holds for the HTTP/2 frames received so far (or the connection closes); returns them all.
    func readFrames(until done: ([RawFrame]) -> Bool) async throws -> [RawFrame] {
        while !done(frames), let chunk = try await inbound.next() {
            received += chunk.readableBytesView
            frames += RawFrame.parse(received, from: &parsed)
        }
        return frames
    }
}

import NIOCore

/// The HTTP/1.1 side of ``LabHostileServer``: reads a request head (up to its blank line, RFC 9112
/// §2.1), then writes the behaviour's response, part by part. A finite response (a redirect, a
/// malformed head) is followed by the next request on the same connection; input that arrives while
/// a response is being written is dropped.
final class HostileHTTP1: HostileDialect {
    /// One part of a response.
    enum Part {
        /// These bytes at once.
        case bytes(String)
        /// `count` pieces made by `make` (given the piece's index), paced by `pace` if any.
        case generated(count: Int, pace: TimeAmount?, make: (Int, ByteBufferAllocator) -> ByteBuffer)
        /// Silence; the connection stays open and is read no more.
        case stall
    }

    /// The longest request head read (the server closes on a longer one).
    static let maximumRequestHead = 64 * 1024

    let behaviour: LabHostileServer.Behaviour
    let host: String
    let scheme: String
    let port: Int
    let trickleInterval: TimeAmount
    private var request = ByteBuffer()
    private var parts: [Part] = []
    private var partIndex = 0
    private var pieceIndex = 0
    private var pauseBeforeNextPiece = false
    private var responding = false

    init(behaviour: LabHostileServer.Behaviour, host: String, scheme: String, port: Int, trickleInterval: TimeAmount) {
        self.behaviour = behaviour
        self.host = host
        self.scheme = scheme
        self.port = port
        self.trickleInterval = trickleInterval
    }

    func receive(_ bytes: inout ByteBuffer) -> Bool {
        guard !responding else { return true }
        request.writeBuffer(&bytes)
        return request.readableBytes <= Self.maximumRequestHead || startIfComplete()
    }

    func next(_ allocator: ByteBufferAllocator) -> HostileStep {
        if !responding && !startIfComplete() { return .wait }
        while partIndex < parts.count {
            switch parts[partIndex] {
            case .bytes(let text):
                partIndex += 1
                return .write(allocator.buffer(string: text))
            case .generated(let count, let pace, let make):
                guard pieceIndex < count else {
                    partIndex += 1
                    pieceIndex = 0
                    pauseBeforeNextPiece = false
                    continue
                }
                if let pace, pauseBeforeNextPiece {
                    pauseBeforeNextPiece = false
                    return .pause(pace)
                }
                pauseBeforeNextPiece = pace != nil
                pieceIndex += 1
                return .write(make(pieceIndex - 1, allocator))
            case .stall:
                return .wait
            }
        }
        // The response is complete: read the next request.
        responding = false
        parts = []
        return .wait
    }

    /// Starts the response if a whole request head has arrived.
    private func startIfComplete() -> Bool {
        guard let end = request.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8)) else { return false }
        let headLength = end.upperBound - request.readableBytesView.startIndex
        let head = request.readString(length: headLength) ?? ""
        request.discardReadBytes()
        parts = response(to: head)
        partIndex = 0
        pieceIndex = 0
        pauseBeforeNextPiece = false
        responding = true
        return true
    }

    /// The parts of the answer to a request whose head is `head`.
    private func response(to head: String) -> [Part] {
        let ok = "HTTP/1.1 200 OK\r\n"
        let shortBody = "content-type: text/plain\r\ncontent-length: 2\r\n\r\nhi"
        switch behaviour {
        case .endlessChunkedBody:
            let chunk = "4000\r\n" + String(repeating: "x", count: 16 * 1024) + "\r\n"
            return [
                .bytes(ok + "content-type: application/octet-stream\r\ntransfer-encoding: chunked\r\n\r\n"),
                .generated(count: .max, pace: nil) { _, allocator in allocator.buffer(string: chunk) },
            ]
        case .zipBomb:
            let prefix = LabGzip.zeroBombPrefix
            let units = Array([[UInt8]](repeating: LabGzip.zeroBombUnit, count: 1260).joined())
            return [
                .bytes(ok + "content-type: application/octet-stream\r\ncontent-encoding: gzip\r\ntransfer-encoding: chunked\r\n\r\n"),
                .generated(count: .max, pace: nil) { index, allocator in
                    let payload = index == 0 ? prefix + units : units
                    var buffer = allocator.buffer(string: String(payload.count, radix: 16) + "\r\n")
                    buffer.writeBytes(payload)
                    buffer.writeString("\r\n")
                    return buffer
                },
            ]
        case .endlessBody:
            return [
                .bytes(ok + "content-type: application/octet-stream\r\ncontent-length: 1000000000000\r\n\r\n"),
                .generated(count: .max, pace: nil) { _, allocator in allocator.buffer(repeating: UInt8(ascii: "x"), count: 16 * 1024) },
            ]
        case .trickleHead:
            let bytes = Array((ok + "x-trickle: one byte at a time\r\n" + shortBody).utf8)
            return [.generated(count: bytes.count, pace: trickleInterval) { index, allocator in allocator.buffer(bytes: bytes[index...index]) }]
        case .trickleBody:
            return [
                .bytes(ok + "content-type: application/octet-stream\r\ncontent-length: 1000000\r\n\r\n"),
                .generated(count: 1_000_000, pace: trickleInterval) { _, allocator in allocator.buffer(string: "x") },
            ]
        case .stallAfterHead:
            return [.bytes(ok + "content-type: text/plain\r\ncontent-length: 1000\r\n\r\n"), .stall]
        case .hugeHead:
            return [.bytes(ok), Self.fillerLines, .bytes(shortBody)]
        case .manyHeaderFields:
            // 1,000 pieces of 100 fields: 100,000 fields.
            return [
                .bytes(ok),
                .generated(count: 1000, pace: nil) { piece, allocator in
                    var buffer = allocator.buffer(capacity: 1600)
                    for field in piece * 100..<(piece + 1) * 100 { buffer.writeString("x-f\(field): v\r\n") }
                    return buffer
                }, .bytes(shortBody),
            ]
        case .longHeaderField:
            // 64 pieces of 16 KiB: a 1 MiB value.
            return [
                .bytes(ok + "x-long: "),
                .generated(count: 64, pace: nil) { _, allocator in
                    allocator.buffer(repeating: UInt8(ascii: "a"), count: 16 * 1024)
                }, .bytes("\r\n" + shortBody),
            ]
        case .manyInformational:
            // 1,000 pieces of 100 interim responses (RFC 9110 §15.2): 100,000.
            let hundred = String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 100)
            return [.generated(count: 1000, pace: nil) { _, allocator in allocator.buffer(string: hundred) }, .bytes(ok + shortBody)]
        case .redirectToFile:
            return [.bytes(Self.redirect(to: "file:///etc/passwd"))]
        case .redirectToFTP:
            return [.bytes(Self.redirect(to: "ftp://127.0.0.1/x"))]
        case .redirectToData:
            return [.bytes(Self.redirect(to: "data:text/plain,hi"))]
        case .redirectLoop:
            return [.bytes(Self.redirect(to: loopTarget(after: head)))]
        case .bareCRInHeader:
            return [.bytes(ok + "x-bare-cr: a\rb\r\n" + shortBody)]
        case .bareLFInHeaderValue:
            let injected = "a\nset-cookie: injected=1\n\nHTTP/1.1 200 OK\ncontent-length: 8\n\ninjected"
            return [.bytes(ok + "x-bare-lf: \(injected)\r\n" + shortBody)]
        case .nulInHeader:
            return [.bytes(ok + "x-nul: a\u{0}b\r\n" + shortBody)]
        case .controlCharactersInHeader:
            return [.bytes(ok + "x-terminal: \(LabHostileServer.Behaviour.terminalControlValue)\r\n" + shortBody)]
        case .hugeConnectReply:
            return [.bytes("HTTP/1.1 200 Connection established\r\n"), Self.fillerLines, .bytes("\r\n"), .stall]
        case .settingsFlood, .pingFlood, .windowUpdateFlood, .resetStreamFlood, .endlessContinuation, .hugeHeaderTable,
            .goAwayLoop, .endlessData, .endlessDataIgnoringFlowControl, .controlCharactersInHTTP2Header:
            // HTTP/2 behaviours never reach the HTTP/1.1 dialect; answer plainly if one does.
            return [.bytes("HTTP/1.1 505 HTTP Version Not Supported\r\ncontent-length: 0\r\n\r\n")]
        }
    }

    /// 16 MB of header lines: 16,384 of `x-filler-N: <1000 bytes>`, in pieces of 16.
    private static var fillerLines: Part {
        let value = String(repeating: "f", count: 1000)
        return .generated(count: 1024, pace: nil) { piece, allocator in
            var buffer = allocator.buffer(capacity: 16 * 1024 + 256)
            for line in piece * 16..<(piece + 1) * 16 { buffer.writeString("x-filler-\(line): \(value)\r\n") }
            return buffer
        }
    }

    /// A `302` head to `location`, with an empty body (the connection stays usable).
    private static func redirect(to location: String) -> String {
        "HTTP/1.1 302 Found\r\nlocation: \(location)\r\ncontent-length: 0\r\n\r\n"
    }

    /// Where ``LabHostileServer/Behaviour/redirectLoop`` sends a request whose head is `head`:
    /// `/loop/N+1` on the other one of the server's two names.
    private func loopTarget(after head: String) -> String {
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: true)
        let target = lines.first?.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
        let hop = target.hasPrefix("/loop/") ? (Int(target.dropFirst("/loop/".count)) ?? 0) : 0
        let requestHost =
            lines.dropFirst().first { $0.lowercased().hasPrefix("host:") }
            .map { $0.dropFirst("host:".count).trimmingSpaces() } ?? ""
        let other = requestHost.hasPrefix("127.0.0.1") ? (host.contains(":") ? "[\(host)]" : host) : "127.0.0.1"
        return "\(scheme)://\(other):\(port)/loop/\(hop &+ 1)"
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

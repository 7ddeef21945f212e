import NIOCore

/// The HTTP/2 side of ``LabHostileServer``, frames written by hand (RFC 9113 §4.1: a 24-bit length,
/// a type, flags, a 31-bit stream id) and header blocks encoded by hand (HPACK, RFC 7541). Reads the
/// client preface and the frames after it — answering the client's SETTINGS and PINGs with an ACK
/// and keeping its flow-control windows — and, once the first HEADERS (the request) arrived, attacks.
final class HostileHTTP2: HostileDialect {
    /// Frame types (RFC 9113 §6).
    enum FrameType: UInt8 {
        case data = 0x0
        case headers = 0x1
        case rstStream = 0x3
        case settings = 0x4
        case ping = 0x6
        case goAway = 0x7
        case windowUpdate = 0x8
        case continuation = 0x9
    }

    /// `END_STREAM` (DATA, HEADERS).
    static let endStream: UInt8 = 0x1
    /// `ACK` (SETTINGS, PING).
    static let ack: UInt8 = 0x1
    /// `END_HEADERS` (HEADERS, CONTINUATION).
    static let endHeaders: UInt8 = 0x4
    /// The largest frame payload either side may send without a larger SETTINGS_MAX_FRAME_SIZE (RFC 9113 §4.2).
    static let maximumFrameSize = 16_384
    /// The client connection preface (RFC 9113 §3.4).
    static let clientPreface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    /// How many frames of a flood go into one write.
    static let floodBatch = 1024

    let behaviour: LabHostileServer.Behaviour
    private var received = ByteBuffer()
    private var prefaceRead = false
    /// Frames to write before anything else (the server preface, SETTINGS ACKs).
    private var urgent = ByteBuffer()
    /// The request's stream, once its HEADERS arrived.
    private var requestStream: UInt32?
    /// How far the attack has gone (frames sent, or the phase of a finite one).
    private var progress = 0
    private var initialWindow = 65_535
    private var connectionWindowUpdates = 0
    private var streamWindowUpdates = 0
    private var dataSent = 0

    init(behaviour: LabHostileServer.Behaviour) {
        self.behaviour = behaviour
    }

    // MARK: Reading

    func receive(_ bytes: inout ByteBuffer) -> Bool {
        received.writeBuffer(&bytes)
        if !prefaceRead {
            let length = min(received.readableBytes, Self.clientPreface.count)
            guard received.readableBytesView.prefix(length).elementsEqual(Self.clientPreface.prefix(length)) else { return false }
            guard length == Self.clientPreface.count else { return true }
            received.moveReaderIndex(forwardBy: length)
            prefaceRead = true
            // The server preface: a SETTINGS frame, the first frame the server sends (RFC 9113 §3.4).
            let settings: [(UInt16, UInt32)] = behaviour == .hugeHeaderTable ? [(UInt16(0x1), UInt32.max)] : [(UInt16(0x3), UInt32(100))]
            Self.writeSettings(settings, into: &urgent)
        }
        while received.readableBytes >= 9 {
            let start = received.readerIndex
            guard let high = received.getInteger(at: start, as: UInt8.self), let low = received.getInteger(at: start + 1, as: UInt16.self),
                let type = received.getInteger(at: start + 3, as: UInt8.self), let flags = received.getInteger(at: start + 4, as: UInt8.self),
                let stream = received.getInteger(at: start + 5, as: UInt32.self)
            else { return false }
            let length = Int(high) << 16 | Int(low)
            guard length <= Self.maximumFrameSize else { return false }  // FRAME_SIZE_ERROR: never raised our limit
            guard received.readableBytes >= 9 + length else { break }
            received.moveReaderIndex(forwardBy: 9)
            guard let payload = received.readSlice(length: length) else { return false }
            frameReceived(type: type, flags: flags, stream: stream & 0x7FFF_FFFF, payload: payload)
        }
        received.discardReadBytes()
        return true
    }

    private func frameReceived(type: UInt8, flags: UInt8, stream: UInt32, payload: ByteBuffer) {
        var payload = payload
        switch FrameType(rawValue: type) {
        case .settings where flags & Self.ack == 0:
            while let identifier = payload.readInteger(as: UInt16.self), let value = payload.readInteger(as: UInt32.self) {
                if identifier == 0x4 { initialWindow = Int(value) }  // SETTINGS_INITIAL_WINDOW_SIZE
            }
            Self.writeFrame(.settings, flags: Self.ack, stream: 0, into: &urgent) { _ in }
        case .ping where flags & Self.ack == 0:
            Self.writeFrame(.ping, flags: Self.ack, stream: 0, into: &urgent) { $0.writeImmutableBuffer(payload) }
        case .windowUpdate:
            let increment = Int((payload.readInteger(as: UInt32.self) ?? 0) & 0x7FFF_FFFF)
            if stream == 0 {
                connectionWindowUpdates += increment
            } else if stream == requestStream {
                streamWindowUpdates += increment
            }
        case .headers where requestStream == nil && stream != 0:
            requestStream = stream
        default:
            break
        }
    }

    // MARK: Writing

    func next(_ allocator: ByteBufferAllocator) -> HostileStep {
        if urgent.readableBytes > 0 {
            defer { urgent = ByteBuffer() }
            return .write(urgent)
        }
        guard let stream = requestStream else { return .wait }
        var out = allocator.buffer(capacity: 16 * 1024)
        switch behaviour {
        case .settingsFlood:
            for _ in 0..<Self.floodBatch {
                progress &+= 1
                Self.writeSettings([(0x3, UInt32(100 + progress % 100))], into: &out)  // SETTINGS_MAX_CONCURRENT_STREAMS
            }
        case .pingFlood:
            for _ in 0..<Self.floodBatch {
                progress &+= 1
                Self.writeFrame(.ping, stream: 0, into: &out) { $0.writeInteger(UInt64(progress)) }
            }
        case .windowUpdateFlood:
            for _ in 0..<Self.floodBatch {
                progress &+= 1
                Self.writeFrame(.windowUpdate, stream: progress % 2 == 0 ? 0 : stream, into: &out) { $0.writeInteger(UInt32(1)) }
            }
        case .resetStreamFlood:
            for _ in 0..<Self.floodBatch {
                // The request's stream first, then every stream id in turn (1, 2, 3…, wrapping below 2^31).
                let target = progress == 0 ? stream : UInt32(progress % 0x7FFF_FFFF)
                progress &+= 1
                Self.writeFrame(.rstStream, stream: target, into: &out) { $0.writeInteger(UInt32(0x8)) }  // CANCEL
            }
        case .endlessContinuation:
            if progress == 0 {
                Self.writeFrame(.headers, stream: stream, into: &out) { $0.writeInteger(UInt8(0x88)) }  // :status 200
            }
            progress &+= 1
            Self.writeFrame(.continuation, stream: stream, into: &out) { payload in
                for index in 0..<16 { Self.writeLiteral(name: "x-continuation-\(index)", value: Self.kilobyte, indexing: false, into: &payload) }
            }
        case .hugeHeaderTable:
            return hugeHeaderTable(stream: stream, into: &out)
        case .controlCharactersInHTTP2Header:
            guard progress == 0 else { return .wait }
            progress = 1
            Self.writeFrame(.headers, flags: Self.endHeaders | Self.endStream, stream: stream, into: &out) { payload in
                payload.writeInteger(UInt8(0x88))  // :status 200
                Self.writeLiteral(name: "x-terminal", value: LabHostileServer.Behaviour.terminalControlValue, indexing: false, into: &payload)
            }
        case .goAwayLoop:
            // Down to 0, then up again, forever.
            let lastStreams: [UInt32] = [0x7FFF_FFFF, stream, 0, stream]
            for _ in 0..<256 {
                let lastStream = lastStreams[progress % lastStreams.count]
                progress &+= 1
                Self.writeFrame(.goAway, stream: 0, into: &out) { payload in
                    payload.writeInteger(lastStream)
                    payload.writeInteger(UInt32(0))  // NO_ERROR
                    payload.writeString("lab goaway \(progress)")
                }
            }
        case .endlessData, .endlessDataIgnoringFlowControl:
            if progress == 0 {
                progress = 1
                Self.writeResponseHeaders(stream: stream, endStream: false, into: &out)
                return .write(out)
            }
            var size = Self.maximumFrameSize
            if behaviour == .endlessData {
                let connectionWindow = 65_535 + connectionWindowUpdates - dataSent
                let streamWindow = initialWindow + streamWindowUpdates - dataSent
                size = min(size, connectionWindow, streamWindow)
                guard size > 0 else { return .wait }  // until a WINDOW_UPDATE (or a larger initial window)
            }
            dataSent += size
            Self.writeFrame(.data, stream: stream, into: &out) { $0.writeRepeatingByte(UInt8(ascii: "x"), count: size) }
        default:
            return .close  // an HTTP/1.1 behaviour never reaches this dialect
        }
        return .write(out)
    }

    /// ``LabHostileServer/Behaviour/hugeHeaderTable``: the SETTINGS went out in the server preface; here
    /// the header block (a HEADERS frame, 1,024 CONTINUATIONs), then a 2-byte body, then silence.
    private func hugeHeaderTable(stream: UInt32, into out: inout ByteBuffer) -> HostileStep {
        let entries = 1024
        defer { progress += 1 }
        switch progress {
        case 0:
            Self.writeFrame(.headers, stream: stream, into: &out) { payload in
                // A dynamic table size update (RFC 7541 §6.3) to 2^32−1, then :status 200.
                Self.writeInteger(UInt64(UInt32.max), prefixBits: 5, pattern: 0x20, into: &payload)
                payload.writeInteger(UInt8(0x88))
            }
        case 1...entries:
            let last = progress == entries
            Self.writeFrame(.continuation, flags: last ? Self.endHeaders : 0, stream: stream, into: &out) { payload in
                Self.writeLiteral(name: "x-table-\(progress)", value: Self.fourKilobytes, indexing: true, into: &payload)
                // The entry just inserted is dynamic index 62 (RFC 7541 §2.3.3): an indexed field, 32 times.
                payload.writeRepeatingByte(0x80 | 62, count: 32)
            }
        case entries + 1:
            Self.writeFrame(.data, flags: Self.endStream, stream: stream, into: &out) { $0.writeString("hi") }
        default:
            return .wait
        }
        return .write(out)
    }

    // MARK: Encoding

    private static let kilobyte = String(repeating: "c", count: 1000)
    private static let fourKilobytes = String(repeating: "t", count: 4000)

    /// A frame: its 9-byte header (RFC 9113 §4.1), then what `payload` writes.
    static func writeFrame(
        _ type: FrameType, flags: UInt8 = 0, stream: UInt32, into buffer: inout ByteBuffer,
        _ payload: (inout ByteBuffer) -> Void
    ) {
        let start = buffer.writerIndex
        buffer.writeRepeatingByte(0, count: 9)
        payload(&buffer)
        let length = buffer.writerIndex - start - 9
        buffer.setInteger(UInt8(truncatingIfNeeded: length >> 16), at: start)
        buffer.setInteger(UInt16(truncatingIfNeeded: length), at: start + 1)
        buffer.setInteger(type.rawValue, at: start + 3)
        buffer.setInteger(flags, at: start + 4)
        buffer.setInteger(stream & 0x7FFF_FFFF, at: start + 5)
    }

    /// A SETTINGS frame (not an ACK) with these identifier–value pairs (RFC 9113 §6.5.1).
    static func writeSettings(_ settings: [(UInt16, UInt32)], into buffer: inout ByteBuffer) {
        writeFrame(.settings, stream: 0, into: &buffer) { payload in
            for (identifier, value) in settings {
                payload.writeInteger(identifier)
                payload.writeInteger(value)
            }
        }
    }

    /// A `200` HEADERS frame with END_HEADERS: `:status` from the static table (index 8, RFC 7541
    /// Appendix A) and a literal `content-type`.
    static func writeResponseHeaders(stream: UInt32, endStream: Bool, into buffer: inout ByteBuffer) {
        writeFrame(.headers, flags: endHeaders | (endStream ? Self.endStream : 0), stream: stream, into: &buffer) { payload in
            payload.writeInteger(UInt8(0x88))
            writeLiteral(name: "content-type", value: "application/octet-stream", indexing: false, into: &payload)
        }
    }

    /// An HPACK integer with an N-bit prefix (RFC 7541 §5.1); `pattern` holds the bits above the prefix.
    static func writeInteger(_ value: UInt64, prefixBits: Int, pattern: UInt8, into buffer: inout ByteBuffer) {
        let limit = UInt64(1) << prefixBits - 1
        guard value >= limit else {
            buffer.writeInteger(pattern | UInt8(value))
            return
        }
        buffer.writeInteger(pattern | UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            buffer.writeInteger(UInt8(rest % 128) | 0x80)
            rest /= 128
        }
        buffer.writeInteger(UInt8(rest))
    }

    /// An HPACK string literal, not Huffman-coded (RFC 7541 §5.2).
    static func writeString(_ text: String, into buffer: inout ByteBuffer) {
        writeInteger(UInt64(text.utf8.count), prefixBits: 7, pattern: 0, into: &buffer)
        buffer.writeString(text)
    }

    /// A literal header field with a new name (RFC 7541 §6.2.1 with incremental indexing, §6.2.2 without).
    static func writeLiteral(name: String, value: String, indexing: Bool, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(indexing ? 0x40 : 0x00))
        writeString(name, into: &buffer)
        writeString(value, into: &buffer)
    }
}

import NIOCore

/// Counts the HTTP/2 frames swift-nio-http2 does not assess for abuse (its `DOSHeuristics` rate-limit
/// PING, SETTINGS, PRIORITY and RST_STREAM, not WINDOW_UPDATE nor GOAWAY) and ends a connection whose
/// peer floods them:
/// - WINDOW_UPDATE frames with an increment under 1,024 bytes (RFC 9113 §6.9 lets a peer send any
///   increment; a stream of +1 updates only burns the receiver's CPU): at most 200 per 30 s, the
///   rate swift-nio-http2 allows for control frames;
/// - GOAWAY frames: at most 16 per connection (a graceful shutdown sends two, §6.8).
///
/// Sits between TLS and the HTTP/2 handler and reads only the 9-byte frame headers (§4.1) — and the
/// 4-byte increment of a WINDOW_UPDATE — skipping payloads; the bytes pass on unchanged.
final class HTTP2FloodGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// A flood of frames the HTTP/2 handler does not limit.
    struct Flood: Error, CustomStringConvertible {
        var description: String
    }

    static let smallWindowUpdateLimit = 200
    static let window = TimeAmount.seconds(30)
    static let goAwayLimit = 16

    /// The client connection preface is ours; the server's bytes are frames from the first byte.
    private var header: [UInt8] = []
    private var skipping = 0
    /// The payload bytes of a WINDOW_UPDATE still to read (its increment).
    private var increment: [UInt8]?
    private var smallUpdates: [NIODeadline] = []
    private var goAways = 0
    private var failed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        let buffer = unwrapInboundIn(data)
        if let flood = buffer.withUnsafeReadableBytes({ scan($0) }) {
            failed = true
            context.fireErrorCaught(flood)
            return
        }
        context.fireChannelRead(data)
    }

    private func scan(_ bytes: UnsafeRawBufferPointer) -> Flood? {
        var index = 0
        while index < bytes.count {
            if var pending = increment {
                pending.append(bytes[index])
                index += 1
                skipping -= 1
                if pending.count == 4 {
                    increment = nil
                    let value = (Int(pending[0] & 0x7F) << 24) | (Int(pending[1]) << 16) | (Int(pending[2]) << 8) | Int(pending[3])
                    if value < 1_024, let flood = recordSmallUpdate() { return flood }
                } else {
                    increment = pending
                }
                continue
            }
            if skipping > 0 {
                let step = min(skipping, bytes.count - index)
                skipping -= step
                index += step
                continue
            }
            header.append(bytes[index])
            index += 1
            guard header.count == 9 else { continue }
            let length = (Int(header[0]) << 16) | (Int(header[1]) << 8) | Int(header[2])
            let type = header[3]
            header.removeAll(keepingCapacity: true)
            skipping = length
            if type == 0x8 && length == 4 {
                increment = []
            } else if type == 0x7 {
                goAways += 1
                if goAways > Self.goAwayLimit { return Flood(description: "more than \(Self.goAwayLimit) GOAWAY frames") }
            }
        }
        return nil
    }

    private func recordSmallUpdate() -> Flood? {
        let now = NIODeadline.now()
        smallUpdates.removeAll { now - $0 > Self.window }
        smallUpdates.append(now)
        guard smallUpdates.count > Self.smallWindowUpdateLimit else { return nil }
        return Flood(description: "more than \(Self.smallWindowUpdateLimit) WINDOW_UPDATE frames of under 1024 bytes in 30 s")
    }
}

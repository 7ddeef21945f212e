import NIOCore

/// Bounds HTTP/1.1 response heads on the bytes as they arrive, before NIO's parser sees them, so a
/// limit is reported with the quantity that broke it ("response headers too large: 307201 > 307200
/// bytes") and a server sending megabytes of headers is refused after ``ResponseLimits/maximumHeadSize``
/// bytes, not after it has finished.
///
/// Sits between TLS and the HTTP/1.1 codec. Heads are scanned only while one is expected: from
/// the moment a request is written (``ExpectResponse``, sent by ``HTTPExchangeHandler``) to the blank
/// line that ends a final (non-1xx) head — RFC 9112 §2.1: a head is lines ended by CRLF (a bare LF is
/// accepted as a line end, §2.2) up to an empty line. Interim 1xx heads (§15.2 of RFC 9110) are counted
/// against ``ResponseLimits/maximumInformationalResponses`` and scanning goes on; `101` ends the head.
/// Body bytes pass through unscanned.
final class ResponseHeadLimiter: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// An outbound user event: a request was written, its response head comes next.
    struct ExpectResponse: Sendable {}

    /// An inbound user event: bytes of a head arrived (NIO's parser passes nothing on before the
    /// head is complete, so a head trickled byte by byte is still activity for the read timeout).
    struct HeadBytesArrived: Sendable {}

    private let limits: ResponseLimits
    private var scanning = false
    private var failed = false
    /// Bytes of the current head, of its current line, and its field lines.
    private var headBytes = 0
    private var lineBytes = 0
    private var fields = 0
    private var informational = 0
    private var onStatusLine = true
    /// The first bytes of the status line (`HTTP/1.1 200`), enough for the status code.
    private var statusPrefix: [UInt8] = []
    private var previous: UInt8 = 0

    init(limits: ResponseLimits) {
        self.limits = limits
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is ExpectResponse else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        scanning = true
        informational = 0
        startHead()
        promise?.succeed()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        guard scanning else {
            context.fireChannelRead(data)
            return
        }
        let buffer = unwrapInboundIn(data)
        let exceeded = buffer.withUnsafeReadableBytes { scan($0) }
        if let exceeded {
            failed = true
            context.fireErrorCaught(ResponseLimitExceeded(limit: exceeded))
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(HeadBytesArrived())
        context.fireChannelRead(data)
    }

    private func startHead() {
        headBytes = 0
        lineBytes = 0
        fields = 0
        onStatusLine = true
        statusPrefix.removeAll(keepingCapacity: true)
        previous = 0
    }

    /// Scans `bytes` while a head is expected; the limit exceeded, if any.
    private func scan(_ bytes: UnsafeRawBufferPointer) -> ResponseLimit? {
        var index = 0
        while scanning && index < bytes.count {
            let byte = bytes[index]
            index += 1
            headBytes += 1
            if headBytes > limits.maximumHeadSize {
                // Everything received so far is head: report it all, as curl does.
                return ResponseLimit(.headSize, observed: headBytes + bytes.count - index, limit: limits.maximumHeadSize)
            }
            let exceeded = byte == UInt8(ascii: "\n") ? endLine() : continueLine(byte)
            if let exceeded { return exceeded }
        }
        return nil
    }

    /// A byte within a line: counted against ``ResponseLimits/maximumHeaderFieldSize`` on a field
    /// line, kept (its first bytes) on the status line.
    @inline(__always)
    private func continueLine(_ byte: UInt8) -> ResponseLimit? {
        lineBytes += 1
        if onStatusLine {
            if statusPrefix.count < 16 { statusPrefix.append(byte) }
        } else if lineBytes > limits.maximumHeaderFieldSize {
            return ResponseLimit(.headerFieldSize, observed: lineBytes, limit: limits.maximumHeaderFieldSize)
        }
        previous = byte
        return nil
    }

    /// A line feed: the end of the status line, of a field line (counted against
    /// ``ResponseLimits/maximumHeaderFields``), or — an empty line — of the head.
    @inline(__always)
    private func endLine() -> ResponseLimit? {
        let length = previous == UInt8(ascii: "\r") ? lineBytes - 1 : lineBytes
        previous = UInt8(ascii: "\n")
        lineBytes = 0
        if onStatusLine {
            onStatusLine = length == 0  // an empty line before the status line is skipped
            return nil
        }
        if length > 0 {
            fields += 1
            if fields > limits.maximumHeaderFields {
                return ResponseLimit(.headerFields, observed: fields, limit: limits.maximumHeaderFields)
            }
            return nil
        }
        return endHead()
    }

    /// The blank line: the head is complete. An interim 1xx head is counted against
    /// ``ResponseLimits/maximumInformationalResponses`` and the next head is scanned; a final one
    /// (or `101`) ends the scan.
    private func endHead() -> ResponseLimit? {
        if let status = statusCode(), status >= 100 && status < 200 && status != 101 {
            informational += 1
            if informational > limits.maximumInformationalResponses {
                return ResponseLimit(.informationalResponses, observed: informational, limit: limits.maximumInformationalResponses)
            }
            startHead()
        } else {
            scanning = false
        }
        return nil
    }

    /// The status code of `HTTP/1.x NNN`, if the line has that shape (else NIO's parser refuses it).
    private func statusCode() -> Int? {
        guard let space = statusPrefix.firstIndex(of: UInt8(ascii: " ")), statusPrefix.count >= space + 4 else { return nil }
        var code = 0
        for byte in statusPrefix[(space + 1)...(space + 3)] {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            code = code * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return code
    }
}

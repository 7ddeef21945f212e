import HTTPTypes
import NIOCore
import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The proxy's answer to CONNECT when it is not 2xx (a 407 goes to HTTP authentication).
struct ProxyRefusal: Error, CustomStringConvertible {
    var statusCode: Int
    var headers: HTTPFields

    var description: String { "the proxy answered CONNECT with \(statusCode)" }
}

/// Opens a `CONNECT` tunnel on a fresh connection to a proxy: writes the request, reads the
/// response head (bounded), and on a 2xx removes itself and calls `established` — which sets up
/// TLS to the origin in the same event-loop turn, before any byte of the tunnel is read.
///
/// Hand-written rather than swift-nio-extras' `NIOHTTP1ProxyConnectHandler`: that handler answers a `407` with
/// `proxyAuthenticationRequired()` and drops the response head, so its `Proxy-Authenticate` challenges (the
/// realm of the protection space, a Digest nonce) never reach HTTP authentication (RFC 9110 §11.7.1); and it needs
/// NIO's HTTP/1 codec in the pipeline, to be taken out again before TLS to the origin starts.
final class ProxyTunnelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let authority: String
    private let proxyAuthorization: String?
    /// The largest reply head accepted (``ResponseLimits/maximumHeadSize``).
    private let maximumHeadSize: Int
    private let established: (ChannelHandlerContext) throws -> Void
    private let failed: (any Error) -> Void
    private var buffer = ByteBuffer()
    /// Where the search for the end of the head resumes.
    private var scanned = 0
    private var done = false

    init(
        authority: String, proxyAuthorization: String?, maximumHeadSize: Int,
        established: @escaping (ChannelHandlerContext) throws -> Void, failed: @escaping (any Error) -> Void
    ) {
        self.maximumHeadSize = maximumHeadSize
        self.authority = authority
        self.proxyAuthorization = proxyAuthorization
        self.established = established
        self.failed = failed
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { sendConnect(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        sendConnect(context: context)
        context.fireChannelActive()
    }

    private var sent = false

    private func sendConnect(context: ChannelHandlerContext) {
        guard !sent else { return }
        sent = true
        // Written as text, so checked here: no control character may split the request.
        let unsafe = (authority + (proxyAuthorization ?? "")).unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
        guard !unsafe else {
            fail(context: context, ProxyRefusal(statusCode: 0, headers: [:]))
            return
        }
        var head = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let proxyAuthorization { head += "Proxy-Authorization: \(proxyAuthorization)\r\n" }
        head += "\r\n"
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: head)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else {
            context.fireChannelRead(data)
            return
        }
        var part = unwrapInboundIn(data)
        buffer.writeBuffer(&part)
        let bytes = buffer.readableBytesView
        guard let end = Self.headEnd(bytes, from: scanned) else {
            scanned = max(0, bytes.count - 3)
            if buffer.readableBytes > maximumHeadSize {
                fail(
                    context: context,
                    ResponseLimitExceeded(limit: ResponseLimit(.headSize, observed: buffer.readableBytes, limit: maximumHeadSize, fromProxy: true)))
            }
            return
        }
        done = true
        let lines = String(decoding: bytes.prefix(end), as: UTF8.self).components(separatedBy: "\r\n")
        guard let status = Self.statusCode(lines.first ?? "") else {
            fail(context: context, ProxyRefusal(statusCode: 0, headers: [:]))
            return
        }
        guard (200..<300).contains(status) else {
            fail(context: context, ProxyRefusal(statusCode: status, headers: Self.headerFields(lines.dropFirst())))
            return
        }
        buffer.moveReaderIndex(forwardBy: end + 4)
        openTunnel(context: context)
    }

    /// The status code of an `HTTP/1.x NNN …` status line (RFC 9112 §4), if it has that shape.
    private static func statusCode(_ statusLine: String) -> Int? {
        let statusParts = statusLine.split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1.") else { return nil }
        return Int(statusParts[1])
    }

    /// The `name: value` field lines of a refusal, for the caller (a 407's `Proxy-Authenticate`).
    private static func headerFields(_ lines: ArraySlice<String>) -> HTTPFields {
        var headers = HTTPFields()
        for line in lines {
            guard let (name, value) = line.splitOnce(atASCII: UInt8(ascii: ":")), let fieldName = HTTPField.Name(String(name)) else { continue }
            headers.append(HTTPField(name: fieldName, value: value.trimmingASCIIBlanks()))
        }
        return headers
    }

    /// A 2xx: the tunnel is set up (``established``), the bytes past the head passed on to it, and this
    /// handler leaves.
    private func openTunnel(context: ChannelHandlerContext) {
        let rest = buffer
        do {
            try established(context)
            // Bytes past the head belong to the tunnel: passed on before this handler leaves.
            if rest.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(rest)) }
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
        } catch {
            fail(context: context, error)
        }
    }

    private func fail(context: ChannelHandlerContext, _ error: any Error) {
        done = true
        failed(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            failed(ProxyRefusal(statusCode: 0, headers: [:]))
        }
        context.fireChannelInactive()
    }

    /// The offset of `\r\n\r\n` in `bytes` at or after `start`, if present.
    static func headEnd(_ bytes: ByteBufferView, from start: Int) -> Int? {
        guard bytes.count >= 4, start <= bytes.count - 4 else { return nil }
        var i = bytes.index(bytes.startIndex, offsetBy: start)
        let last = bytes.index(bytes.endIndex, offsetBy: -4)
        while i <= last {
            if bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 { return i - bytes.startIndex }
            i += 1
        }
        return nil
    }
}

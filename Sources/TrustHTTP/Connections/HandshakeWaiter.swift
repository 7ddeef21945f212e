import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPCompression
import NIOSSL
import NIOTLS
import TrustNIO

/// The HTTP protocol set up on a connection, and the TLS version it runs over.
struct NegotiatedProtocol: Sendable {
    var multiplexer: NIOLoopBound<NIOHTTP2Handler.StreamMultiplexer>?
    var tlsVersion: TLSVersion?
    /// Set up in each HTTP/2 stream too (``Connection/configureStream(_:decompression:)``).
    var decompression: ResponseDecompression = .disabled
}

/// Waits for the TLS handshake and, in the same event-loop turn, sets up HTTP/1.1 or HTTP/2 as
/// ALPN decided — before any application data (a server's HTTP/2 SETTINGS) can arrive and be lost.
final class HandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let promise: EventLoopPromise<NegotiatedProtocol>
    private let limits: ResponseLimits
    private let errorLog: ConnectionErrorLog?

    private let decompression: ResponseDecompression

    init(promise: EventLoopPromise<NegotiatedProtocol>, limits: ResponseLimits, decompression: ResponseDecompression = .disabled, errorLog: ConnectionErrorLog?)
    {
        self.decompression = decompression
        self.promise = promise
        self.limits = limits
        self.errorLog = errorLog
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            do {
                let pipeline = context.pipeline.syncOperations
                let tlsVersion = try? pipeline.handler(type: NIOSSLClientHandler.self).tlsVersion
                pipeline.removeHandler(self, promise: nil)
                var result = try Self.configure(context.channel, http2: negotiated == "h2", limits: limits, decompression: decompression, errorLog: errorLog)
                result.tlsVersion = tlsVersion ?? nil
                promise.succeed(result)
            } catch {
                promise.fail(error)
                context.close(promise: nil)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Adds the HTTP/1.1 or HTTP/2 handlers; must run on the channel's event loop.
    static func configure(
        _ channel: any Channel, http2: Bool, limits: ResponseLimits, decompression: ResponseDecompression = .disabled, errorLog: ConnectionErrorLog? = nil
    ) throws -> NegotiatedProtocol {
        let pipeline = channel.pipeline.syncOperations
        if http2 {
            try pipeline.addHandler(HTTP2FloodGuard())
            let multiplexer = try pipeline.configureHTTP2Pipeline(
                mode: .client, connectionConfiguration: http2Configuration(limits), streamConfiguration: http2StreamConfiguration,
                inboundStreamInitializer: { $0.close() })
            try pipeline.addHandler(HTTP2ConnectionObserver())
            try pipeline.addHandler(ConnectionErrorRecorder(log: errorLog ?? ConnectionErrorLog(), closesOnViolation: true))
            return NegotiatedProtocol(multiplexer: NIOLoopBound(multiplexer, eventLoop: channel.eventLoop), decompression: decompression)
        }
        // Our limiter counts the head's bytes first and reports which limit broke; NIO's parser keeps
        // the same bounds for what the limiter does not see (trailers after a chunked body).
        var decoderLimits = NIOHTTPDecoderLimitConfiguration()
        decoderLimits.maxHeaderListSize = limits.maximumHeadSize
        decoderLimits.maxHeaderFieldSize = limits.maximumHeaderFieldSize
        decoderLimits.maxHeaderFieldCount = limits.maximumHeaderFields
        try pipeline.addHandler(ResponseHeadLimiter(limits: limits))
        // NIO's `addHTTPClientHandlers`, but with interim responses forwarded: `100 Continue`
        // releases a body held back by `Expect: 100-continue` (HTTPExchangeHandler drops the rest).
        try pipeline.addHandlers([
            HTTPRequestEncoder(),
            ByteToMessageHandler(HTTPResponseDecoder(informationalResponseStrategy: .forward, limitConfiguration: decoderLimits)),
            NIOHTTPRequestHeadersValidator(),
        ])
        if decompression.isEnabled {
            try pipeline.addHandler(NIOHTTPResponseDecompressor(limit: .ratio(decompression.maximumRatio)))
        }
        try pipeline.addHandler(HTTP1ExchangeHandler())
        return NegotiatedProtocol(multiplexer: nil, decompression: decompression)
    }

    /// swift-nio-http2's protections, set deliberately rather than inherited:
    /// - `SETTINGS_MAX_HEADER_LIST_SIZE` (RFC 9113 §6.5.2) = ``ResponseLimits/maximumHeadSize``; the
    ///   HPACK decoder refuses a larger list (`ExcessivelyLargeHeaderBlock`), counted as RFC 7541 §4.1
    ///   says (name + value + 32 per field);
    /// - at most 5 CONTINUATION frames after a HEADERS frame (`ExcessiveContinuationFrames`) — a header
    ///   block larger than six frames of 16 KiB is refused before it is decoded;
    /// - `SETTINGS_HEADER_TABLE_SIZE` stays 4,096 (RFC 7541 §4.2: the peer cannot grow our decoder's
    ///   table past what we advertise; its own table size changes only what we encode);
    /// - at most 200 PING/SETTINGS/PRIORITY frames per 30 s (`ExcessiveControlFrames`), 200 stream
    ///   resets per 30 s (`ExcessiveRSTFrames`), 1 empty DATA frame in a row, 10,000 buffered outbound
    ///   control frames (a peer that floods PINGs and never reads our ACKs), and the connection
    ///   closed after 200 protocol "glitches" (`ExcessiveNumberOfGlitches`); WINDOW_UPDATE and GOAWAY
    ///   floods, which it does not assess, are ended by ``HTTP2FloodGuard``;
    /// - flow-control windows (RFC 9113 §5.2) of ``http2StreamWindow`` per stream and
    ///   ``http2ConnectionWindow`` per connection — what a server may send ahead of the reader, so what a
    ///   connection may hold in memory; a peer ignoring them is a protocol error (`FlowControlViolation`).
    ///   64 KiB (the protocol's default) held a large body to a fraction of curl's rate on loopback: every
    ///   64 KiB waited for a WINDOW_UPDATE.
    static func http2Configuration(_ limits: ResponseLimits) -> NIOHTTP2Handler.ConnectionConfiguration {
        var configuration = NIOHTTP2Handler.ConnectionConfiguration()
        configuration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
            HTTP2Setting(parameter: .maxHeaderListSize, value: limits.maximumHeadSize),
            HTTP2Setting(parameter: .enablePush, value: 0),
        ]
        configuration.maximumSequentialContinuationFrames = 5
        configuration.maximumSequentialEmptyDataFrames = 1
        configuration.maximumBufferedControlFrames = 10_000
        configuration.controlFrameRateLimit.maximumCount = 200
        configuration.controlFrameRateLimit.windowLength = .seconds(30)
        configuration.maximumConnectionGlitches = 200
        configuration.targetWindowSize = http2ConnectionWindow
        return configuration
    }

    /// The flow-control window of each stream: 256 KiB, the body's backpressure high watermark
    /// (``BodyFlowControl``), so a reader that keeps up rarely waits for a window update. Larger
    /// windows (1 MiB per stream, 4 MiB per connection) were measured and not kept: swift-nio-http2's
    /// buffered DATA slices keep their whole read buffers alive, and a backpressured 1 GiB download then
    /// held over 200 MiB.
    static let http2StreamWindow = 256 << 10
    /// The connection's flow-control window, shared by its streams: 1 MiB.
    static let http2ConnectionWindow = 1 << 20

    /// Each stream's configuration: its window (``http2StreamWindow``).
    static var http2StreamConfiguration: NIOHTTP2Handler.StreamConfiguration {
        var configuration = NIOHTTP2Handler.StreamConfiguration()
        configuration.targetWindowSize = http2StreamWindow
        return configuration
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ConnectionClosedError())
        context.fireChannelInactive()
    }
}

import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A server on 127.0.0.1 (a random port) that fails on purpose, at one chosen point of a
/// connection — for fault tests of clients: every connection it accepts meets the same ``Fault``.
///
/// ```swift
/// let good = pki.servers["good"]!
/// let server = try await LabFaultServer.start(.closeMidBody, host: "good.lab.test", chain: good.chain, privateKey: good.privateKey)
/// // GET https://good.lab.test:\(server.port)/ → a response head announcing 1,000 bytes, 100 bytes, then the connection closes.
/// ```
///
/// Handshake faults work at the TCP level (no TLS server runs); the others complete the TLS
/// handshake first (HTTP/1.1 or HTTP/2 by ALPN, as the fault says), read the request and then fail.
public final class LabFaultServer: Sendable {
    /// Where and how a connection fails.
    public enum Fault: String, Sendable, CaseIterable {
        /// Reads the client's first bytes (its TLS ClientHello), then closes: the server dies mid-handshake.
        case closeAfterClientHello = "close-after-client-hello"
        /// A TLS server sends its first handshake flight (ServerHello, its certificate…), then closes
        /// before the client can finish — typically while the client is still evaluating the certificate.
        case closeAfterServerFlight = "close-after-server-flight"
        /// Accepts the connection and reads everything, never answers: the handshake stalls.
        case stallHandshake = "stall-handshake"
        /// HTTP/1.1: reads the request, sends the status line and part of a header, then closes.
        case closeMidHeaders = "close-mid-headers"
        /// HTTP/1.1: a head announcing `Content-Length: 1000`, 100 bytes of body, then closes.
        case closeMidBody = "close-mid-body"
        /// HTTP/1.1: a chunked response with one 100-byte chunk and no last chunk, then closes.
        case closeMidChunkedBody = "close-mid-chunked-body"
        /// HTTP/2: resets the request's stream (`RST_STREAM`, `INTERNAL_ERROR`); the connection stays open.
        case http2ResetStream = "http2-reset-stream"
        /// HTTP/2: `GOAWAY` (last stream 0, `INTERNAL_ERROR`: the request was not processed), then closes.
        case http2GoAway = "http2-goaway"
        /// HTTP/2: response HEADERS announcing `content-length: 1000`, a 100-byte DATA frame, then closes.
        case http2CloseMidData = "http2-close-mid-data"

        /// Whether the fault happens before or during the TLS handshake (no HTTP is spoken).
        package var isHandshakeFault: Bool {
            self == .closeAfterClientHello || self == .closeAfterServerFlight || self == .stallHandshake
        }

        /// Whether the fault is an HTTP/2 one (the server offers only `h2` over ALPN).
        package var isHTTP2: Bool {
            self == .http2ResetStream || self == .http2GoAway || self == .http2CloseMidData
        }
    }

    /// The fault every connection meets.
    public let fault: Fault
    /// The port the server listens on, on 127.0.0.1.
    public let port: Int
    /// The host name a client should use (connect to 127.0.0.1).
    public let host: String
    /// `https`, or `http` for a plain server.
    public let scheme: String
    private let listener: LabListener

    /// `SCHEME://HOST:PORT`.
    public var baseURL: String { "\(scheme)://\(host):\(port)" }

    /// How many connections the server has accepted so far.
    public var acceptedConnections: Int { listener.acceptedConnections }

    private init(fault: Fault, host: String, scheme: String, listener: LabListener) {
        self.fault = fault
        self.port = listener.port
        self.host = host
        self.scheme = scheme
        self.listener = listener
    }

    /// Starts a TLS server presenting `chain` (leaf first) with `privateKey` whose connections meet `fault`.
    public static func start(
        _ fault: Fault, host: String, chain: [Certificate], privateKey: Certificate.PrivateKey,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> LabFaultServer {
        var configuration = try LabServer.serverConfiguration(chain: chain, privateKey: privateKey)
        configuration.applicationProtocols = fault.isHTTP2 ? ["h2"] : ["http/1.1"]
        let context = try NIOSSLContext(configuration: configuration)
        return try await start(fault, host: host, scheme: "https", group: group) { channel in
            let pipeline = channel.pipeline.syncOperations
            switch fault {
            case .closeAfterClientHello:
                try pipeline.addHandler(CloseOnFirstRead())
            case .stallHandshake:
                try pipeline.addHandler(DiscardInbound())
            case .closeAfterServerFlight:
                try pipeline.addHandler(CloseAfterFirstFlush())
                try pipeline.addHandler(NIOSSLServerHandler(context: context))
            case .closeMidHeaders, .closeMidBody, .closeMidChunkedBody:
                try pipeline.addHandler(NIOSSLServerHandler(context: context))
                try pipeline.addHandler(HTTP1Fault(fault: fault))
            case .http2ResetStream, .http2GoAway, .http2CloseMidData:
                try pipeline.addHandler(NIOSSLServerHandler(context: context))
                try pipeline.addHandler(NIOHTTP2Handler(mode: .server))
                try pipeline.addHandler(HTTP2Fault(fault: fault))
            }
        }
    }

    /// Starts a plain-HTTP/1.1 server (no TLS) whose connections meet `fault`: one of the
    /// HTTP/1.1 faults, ``Fault/stallHandshake`` (never answers) or ``Fault/closeAfterClientHello``
    /// (closes once the request arrives).
    public static func startPlain(
        _ fault: Fault, host: String = "plain.lab.test",
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> LabFaultServer {
        guard !fault.isHTTP2 && fault != .closeAfterServerFlight else {
            throw LabError.cannotWrite(fault.rawValue, "this fault needs TLS")
        }
        return try await start(fault, host: host, scheme: "http", group: group) { channel in
            let pipeline = channel.pipeline.syncOperations
            switch fault {
            case .closeAfterClientHello: try pipeline.addHandler(CloseOnFirstRead())
            case .stallHandshake: try pipeline.addHandler(DiscardInbound())
            default: try pipeline.addHandler(HTTP1Fault(fault: fault))
            }
        }
    }

    private static func start(
        _ fault: Fault, host: String, scheme: String, group: any EventLoopGroup,
        _ configure: @escaping @Sendable (any Channel) throws -> Void
    ) async throws -> LabFaultServer {
        let listener = try await LabListener.bind(group: group) { channel, _ in try configure(channel) }
        return LabFaultServer(fault: fault, host: host, scheme: scheme, listener: listener)
    }

    /// Closes the listener and every connection still open (a stalled one included).
    public func shutdown() async throws {
        await listener.close()
    }

    /// Closes the connection as soon as the client has sent something.
    private final class CloseOnFirstRead: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.close(promise: nil)
        }
    }

    /// Reads and drops everything; never writes.
    private final class DiscardInbound: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
    }

    /// Sits at the socket end of a TLS server: lets the server's first flight out, then closes.
    private final class CloseAfterFirstFlush: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        private var lastWrite: EventLoopFuture<Void>?
        private var closing = false

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            guard !closing else {
                promise?.fail(ChannelError.ioOnClosedChannel)
                return
            }
            let written = context.eventLoop.makePromise(of: Void.self)
            if let promise { written.futureResult.cascade(to: promise) }
            lastWrite = written.futureResult
            context.write(data, promise: written)
        }

        func flush(context: ChannelHandlerContext) {
            context.flush()
            guard !closing, let lastWrite else { return }
            closing = true
            let channel = context.channel
            lastWrite.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// Reads an HTTP/1.1 request head, then answers with a broken response and closes.
    private final class HTTP1Fault: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        let fault: Fault
        private var received = ByteBuffer()
        private var answered = false

        init(fault: Fault) {
            self.fault = fault
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var part = unwrapInboundIn(data)
            guard !answered else { return }
            received.writeBuffer(&part)
            guard received.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8)) != nil else { return }
            answered = true
            let body = String(repeating: "x", count: 100)
            let text: String
            switch fault {
            case .closeMidHeaders: text = "HTTP/1.1 200 OK\r\nContent-Type: text/pl"
            case .closeMidBody: text = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + body
            default: text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n" + body + "\r\n"
            }
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: text))).whenComplete { _ in
                channel.close(promise: nil)
            }
        }
    }

    /// Speaks HTTP/2 frames directly (no stream multiplexer) and breaks the first request's stream.
    private final class HTTP2Fault: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame
        typealias OutboundOut = HTTP2Frame

        let fault: Fault
        private var answered = false

        init(fault: Fault) {
            self.fault = fault
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            guard case .headers = frame.payload, !answered else { return }
            answered = true
            let channel = context.channel
            switch fault {
            case .http2ResetStream:
                context.writeAndFlush(wrapOutboundOut(HTTP2Frame(streamID: frame.streamID, payload: .rstStream(.internalError))), promise: nil)
                answered = false  // every request on the connection is reset
            case .http2GoAway:
                let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: .rootStream, errorCode: .internalError, opaqueData: nil))
                context.writeAndFlush(wrapOutboundOut(goAway)).whenComplete { _ in channel.close(promise: nil) }
            default:
                let head = HTTP2Frame.FramePayload.headers(
                    .init(headers: [":status": "200", "content-type": "application/octet-stream", "content-length": "1000"]))
                context.write(wrapOutboundOut(HTTP2Frame(streamID: frame.streamID, payload: head)), promise: nil)
                let data = HTTP2Frame(streamID: frame.streamID, payload: .data(.init(data: .byteBuffer(channel.allocator.buffer(repeating: 0x78, count: 100)))))
                context.writeAndFlush(wrapOutboundOut(data)).whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }
}

import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A forward HTTP proxy on 127.0.0.1 for tests and demos: `CONNECT host:port` tunnels (for https)
/// and absolute-form requests (for http, one per connection), optionally behind Basic or Digest
/// proxy authentication (user `alice`, password `wonderland`). Lab host names are resolved with
/// ``LabPKI/loopbackResolve``. It records each request line it receives, and the header names.
public final class LabProxy: Sendable {
    /// The proxy authentication a proxy asks for.
    public enum Authentication: String, Sendable, CaseIterable {
        case none, basic, digest
    }

    /// The port the proxy listens on, on 127.0.0.1.
    public let port: Int
    /// The proxy authentication asked for.
    public let authentication: Authentication
    private let channel: any Channel
    private let log: NIOLockedValueBox<[String]>

    /// `http://127.0.0.1:PORT`.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// The request lines received (`CONNECT good.lab.test:443`, `GET http://…`), each followed by
    /// `  headers: name, name…`.
    public var requests: [String] { log.withLockedValue { $0 } }

    private init(port: Int, authentication: Authentication, channel: any Channel, log: NIOLockedValueBox<[String]>) {
        self.port = port
        self.authentication = authentication
        self.channel = channel
        self.log = log
    }

    /// Starts a proxy on a free port of 127.0.0.1; `resolve` maps host names (or `host:port`) to the addresses it connects to.
    public static func start(
        authentication: Authentication = .none, resolve: [String: String] = LabPKI.loopbackResolve,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> LabProxy {
        let log = NIOLockedValueBox<[String]>([])
        let verifier = LabHTTPAuthentication()
        let (channel, port) = try await LabServer.bind(group: group) { channel in
            channel.eventLoop.makeCompletedFuture {
                let decoder = ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes))
                let encoder = HTTPResponseEncoder()
                try channel.pipeline.syncOperations.addHandlers([
                    decoder, encoder,
                    LabProxyHandler(
                        authentication: authentication, verifier: verifier, resolve: resolve, log: log, decoder: decoder, encoder: encoder, group: group),
                ])
            }
        }
        return LabProxy(port: port, authentication: authentication, channel: channel, log: log)
    }

    /// Stops listening for connections.
    public func shutdown() async throws {
        try await channel.close()
    }
}

/// One client connection to the lab proxy.
final class LabProxyHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let authentication: LabProxy.Authentication
    let verifier: LabHTTPAuthentication
    let resolve: [String: String]
    let log: NIOLockedValueBox<[String]>
    let decoder: ByteToMessageHandler<HTTPRequestDecoder>
    let encoder: HTTPResponseEncoder
    let group: any EventLoopGroup
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(
        authentication: LabProxy.Authentication, verifier: LabHTTPAuthentication, resolve: [String: String], log: NIOLockedValueBox<[String]>,
        decoder: ByteToMessageHandler<HTTPRequestDecoder>, encoder: HTTPResponseEncoder, group: any EventLoopGroup
    ) {
        self.authentication = authentication
        self.verifier = verifier
        self.resolve = resolve
        self.log = log
        self.decoder = decoder
        self.encoder = encoder
        self.group = group
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
            log.withLockedValue {
                $0.append("\(head.method.rawValue) \(head.uri)")
                $0.append("  headers: " + head.headers.map { $0.name.lowercased() }.joined(separator: ", "))
            }
        case .body(var part):
            body.writeBuffer(&part)
        case .end:
            guard let head else { return }
            self.head = nil
            handle(context: context, head: head)
        }
    }

    private func handle(context: ChannelHandlerContext, head: HTTPRequestHead) {
        let answer = head.headers["proxy-authorization"].first
        switch authentication {
        case .none:
            break
        case .basic:
            if answer.flatMap(verifier.verifyBasic) == nil {
                return refuse(context: context, head: head, challenge: "Basic realm=\"lab proxy\"")
            }
        case .digest:
            let options = LabHTTPAuthentication.DigestOptions(algorithm: LabHTTPAuthentication.Algorithm("SHA-256")!, qop: "auth")
            let verdict = answer.map { verifier.verifyDigest($0, options: options, method: head.method.rawValue, uri: head.uri, body: [], realm: "lab proxy") }
            guard case .success? = verdict else {
                return refuse(context: context, head: head, challenge: verifier.digestChallenge(options, stale: false, realm: "lab proxy"))
            }
        }
        if head.method == .CONNECT {
            tunnel(context: context, authority: head.uri)
        } else {
            forward(context: context, head: head)
        }
    }

    private func refuse(context: ChannelHandlerContext, head: HTTPRequestHead, challenge: String) {
        let text = "proxy authentication required\n"
        let headers = HTTPHeaders([("proxy-authenticate", challenge), ("content-length", String(text.utf8.count)), ("connection", "close")])
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .proxyAuthenticationRequired, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: text)))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }

    private func target(_ authority: String) -> (String, Int)? {
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]) else { return nil }
        var host = String(authority[..<colon])
        if host.hasPrefix("[") { host = String(host.dropFirst().dropLast()) }
        return (resolve["\(host):\(port)"] ?? resolve[host] ?? host, port)
    }

    private func fail(context: ChannelHandlerContext, status: HTTPResponseStatus) {
        let headers = HTTPHeaders([("content-length", "0"), ("connection", "close")])
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }

    /// CONNECT: answer 200, then relay bytes both ways.
    private func tunnel(context: ChannelHandlerContext, authority: String) {
        guard let (host, port) = target(authority) else { return fail(context: context, status: .badRequest) }
        // Written as bytes: a 2xx to CONNECT has no body (the encoder would frame one).
        relay(context: context, host: host, port: port, toClient: "HTTP/1.1 200 Connection Established\r\n\r\n", toUpstream: nil)
    }

    /// An absolute-form request: sent on in origin form (proxy headers dropped, `Connection: close`),
    /// the response relayed as bytes, then both connections closed.
    private func forward(context: ChannelHandlerContext, head: HTTPRequestHead) {
        guard let url = URLComponents(string: head.uri), url.scheme == "http", let host = url.host else { return fail(context: context, status: .badRequest) }
        let port = url.port ?? 80
        guard let (address, _) = target("\(host):\(port)") else { return fail(context: context, status: .badRequest) }
        var requestText =
            "\(head.method.rawValue) \(url.percentEncodedPath.isEmpty ? "/" : url.percentEncodedPath)\(url.percentEncodedQuery.map { "?" + $0 } ?? "") HTTP/1.1\r\n"
        for header in head.headers where !["proxy-authorization", "proxy-connection", "connection"].contains(header.name.lowercased()) {
            requestText += "\(header.name): \(header.value)\r\n"
        }
        requestText += "Connection: close\r\n\r\n"
        var outgoing = context.channel.allocator.buffer(string: requestText)
        var requestBody = body
        outgoing.writeBuffer(&requestBody)
        relay(context: context, host: address, port: port, toClient: nil, toUpstream: outgoing)
    }

    /// Connects to `host:port`; on success the client connection stops speaking HTTP and becomes a
    /// byte relay with the upstream one (after `toClient` is written back and `toUpstream` sent on);
    /// on failure the client gets 502.
    private func relay(context: ChannelHandlerContext, host: String, port: Int, toClient: String?, toUpstream: ByteBuffer?) {
        let client = context.channel
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        ClientBootstrap(group: context.eventLoop)
            .channelInitializer { upstream in
                upstream.eventLoop.makeCompletedFuture { try upstream.pipeline.syncOperations.addHandler(LabRelay(partner: client)) }
            }
            .connect(host: host, port: port)
            .whenComplete { result in
                let (handler, context) = loopBound.value
                switch result {
                case .failure:
                    handler.fail(context: context, status: .badGateway)
                case .success(let upstream):
                    let pipeline = context.pipeline.syncOperations
                    pipeline.removeHandler(handler.encoder, promise: nil)
                    if let toClient { context.channel.writeAndFlush(context.channel.allocator.buffer(string: toClient), promise: nil) }
                    try? pipeline.addHandler(LabRelay(partner: upstream))
                    pipeline.removeHandler(handler.decoder, promise: nil)
                    pipeline.removeHandler(handler, promise: nil)
                    if let toUpstream { upstream.writeAndFlush(toUpstream, promise: nil) }
                }
            }
    }
}

/// Copies bytes read on one channel to its partner; closes the partner when this one closes.
final class LabRelay: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    let partner: any Channel

    init(partner: any Channel) {
        self.partner = partner
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOSSL
import NIOTLS
import TrustNIO

/// The HTTP protocol set up on a connection, and the TLS version it runs over.
struct NegotiatedProtocol: Sendable {
    var multiplexer: NIOLoopBound<NIOHTTP2Handler.StreamMultiplexer>?
    var tlsVersion: String?
}

/// Waits for the TLS handshake and, in the same event-loop turn, sets up HTTP/1.1 or HTTP/2 as
/// ALPN decided — before any application data (a server's HTTP/2 SETTINGS) can arrive and be lost.
final class HandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let promise: EventLoopPromise<NegotiatedProtocol>

    init(promise: EventLoopPromise<NegotiatedProtocol>) {
        self.promise = promise
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            do {
                let pipeline = context.pipeline.syncOperations
                let tlsVersion = try? pipeline.handler(type: NIOSSLClientHandler.self).tlsVersion?.displayName
                pipeline.removeHandler(self, promise: nil)
                var result = try Self.configure(context.channel, http2: negotiated == "h2")
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
    static func configure(_ channel: any Channel, http2: Bool) throws -> NegotiatedProtocol {
        let pipeline = channel.pipeline.syncOperations
        if http2 {
            let multiplexer = try pipeline.configureHTTP2Pipeline(
                mode: .client, connectionConfiguration: .init(), streamConfiguration: .init(),
                inboundStreamInitializer: { $0.close() })
            return NegotiatedProtocol(multiplexer: NIOLoopBound(multiplexer, eventLoop: channel.eventLoop))
        }
        try pipeline.addHTTPClientHandlers()
        try pipeline.addHandler(HTTPExchangeHandler())
        return NegotiatedProtocol(multiplexer: nil)
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

import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// A client TLS handshake with a loopback server, in a plain NIO pipeline (no TrustHTTPClient): for tests of what NIOSSL
/// and BoringSSL do with a configuration or a verification callback.
package enum TLSHandshake {
    /// Connects to 127.0.0.1:`port` with the handler `makeHandler` makes, and returns the channel once the handshake
    /// has completed (the caller closes it); throws the first error the pipeline sees, or `ChannelError.eof` when
    /// the connection closes first.
    package static func connect(port: Int, _ makeHandler: @escaping @Sendable () throws -> NIOSSLClientHandler) async throws -> any Channel {
        let group = MultiThreadedEventLoopGroup.singleton
        let promise = group.next().makePromise(of: Void.self)
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(try makeHandler())
                    try channel.pipeline.syncOperations.addHandler(Watcher(promise: promise))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        do {
            try await promise.futureResult.get()
        } catch {
            channel.close(promise: nil)
            throw error
        }
        return channel
    }

    /// Completes the promise when the handshake does; fails it with the first error, or when the channel closes.
    private final class Watcher: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let promise: EventLoopPromise<Void>
        init(promise: EventLoopPromise<Void>) { self.promise = promise }
        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case .handshakeCompleted = event as? TLSUserEvent { promise.succeed() }
            context.fireUserInboundEventTriggered(event)
        }
        func errorCaught(context: ChannelHandlerContext, error: any Error) { promise.fail(error) }
        func channelInactive(context: ChannelHandlerContext) { promise.fail(ChannelError.eof) }
    }
}

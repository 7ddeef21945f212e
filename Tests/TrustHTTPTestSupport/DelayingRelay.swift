import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TCP relay on 127.0.0.1 that holds each connection for `delay` before it connects it to the upstream port —
/// a server whose handshake is slow — and counts the connections it accepts.
package final class DelayingRelay: Sendable {
    /// The port, on 127.0.0.1.
    package let port: Int
    private let channel: any Channel
    private let accepted: NIOLockedValueBox<Int>

    /// Connections accepted so far.
    package var acceptedCount: Int { accepted.withLockedValue { $0 } }

    private init(port: Int, channel: any Channel, accepted: NIOLockedValueBox<Int>) {
        self.port = port
        self.channel = channel
        self.accepted = accepted
    }

    /// Listens on a free port; each connection reaches `upstreamPort` on 127.0.0.1 after `delay`.
    package static func start(to upstreamPort: Int, delay: TimeAmount) async throws -> DelayingRelay {
        let accepted = NIOLockedValueBox(0)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { inbound in
                accepted.withLockedValue { $0 += 1 }
                return inbound.eventLoop.makeCompletedFuture {
                    try inbound.pipeline.syncOperations.addHandler(Inbound(upstreamPort: upstreamPort, delay: delay))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return DelayingRelay(port: channel.localAddress?.port ?? 0, channel: channel, accepted: accepted)
    }

    /// Stops listening (relayed connections end with their peers).
    package func shutdown() async throws {
        try await channel.close()
    }

    /// The client's side: bytes kept until the upstream is connected, then relayed.
    private final class Inbound: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        let upstreamPort: Int
        let delay: TimeAmount
        private var upstream: (any Channel)?
        private var pending: [ByteBuffer] = []
        private var closed = false

        init(upstreamPort: Int, delay: TimeAmount) {
            self.upstreamPort = upstreamPort
            self.delay = delay
        }

        func channelActive(context: ChannelHandlerContext) {
            let client = context.channel
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let port = upstreamPort
            context.eventLoop.scheduleTask(in: delay) {
                ClientBootstrap(group: client.eventLoop)
                    .channelInitializer { upstream in
                        upstream.eventLoop.makeCompletedFuture { try upstream.pipeline.syncOperations.addHandler(Outbound(partner: client)) }
                    }
                    .connect(host: "127.0.0.1", port: port)
                    .whenComplete { result in
                        let (handler, context) = loopBound.value
                        switch result {
                        case .success(let upstream):
                            guard !handler.closed else {
                                upstream.close(promise: nil)
                                return
                            }
                            handler.upstream = upstream
                            for buffer in handler.pending { upstream.write(buffer, promise: nil) }
                            handler.pending = []
                            upstream.flush()
                        case .failure:
                            context.close(promise: nil)
                        }
                    }
            }
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            if let upstream { upstream.writeAndFlush(buffer, promise: nil) } else { pending.append(buffer) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            closed = true
            upstream?.close(promise: nil)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }

    /// The upstream's side: relayed back to the client.
    private final class Outbound: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let partner: any Channel

        init(partner: any Channel) { self.partner = partner }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            partner.writeAndFlush(unwrapInboundIn(data), promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            partner.close(promise: nil)
            context.fireChannelInactive()
        }
    }
}

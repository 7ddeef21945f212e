import NIOCore
import NIOHTTP2

/// Ends a lab server's HTTP/2 connection after its GOAWAY once the last open stream has closed and what the
/// streams wrote has gone out: a graceful shutdown lets every stream up to the GOAWAY's last-stream-id finish
/// (RFC 9113 §6.8), so a request already in flight on the connection is answered in full. On the connection's
/// pipeline, after NIOHTTP2's handler, whose stream events it counts; `GET /close` asks it to close the
/// connection when idle.
final class LabGracefulClose: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    /// How long the closing waits for the last bytes to reach a client that does not read them.
    static let drainTimeout = TimeAmount.seconds(10)

    private var openStreams = 0
    private var closesWhenIdle = false
    private var closing = false
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is NIOHTTP2StreamCreatedEvent {
            openStreams += 1
        } else if event is StreamClosedEvent {
            openStreams -= 1
            closeIfIdle()
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Closes the connection once no stream is open: now, if none is. On the connection's event loop.
    func closeWhenIdle() {
        closesWhenIdle = true
        closeIfIdle()
    }

    /// A stream is closed once its last frame has passed NIOHTTP2's handler, which may be before the bytes
    /// leave (a client that reads slowly): a closing channel drops writes still pending. So a PING goes after
    /// them, and the connection closes once it is written (or after ``drainTimeout``).
    private func closeIfIdle() {
        guard closesWhenIdle, !closing, openStreams <= 0, let context else { return }
        closing = true
        let written = context.eventLoop.makePromise(of: Void.self)
        let deadline = context.eventLoop.scheduleTask(in: Self.drainTimeout) { written.succeed() }
        // Completed on the event loop (the PING's write, or the deadline's task), where the context may be used.
        written.futureResult.assumeIsolated().whenComplete { _ in
            deadline.cancel()
            context.close(promise: nil)
        }
        let ping = HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: 0), ack: false))
        context.writeAndFlush(NIOAny(ping), promise: written)
    }
}

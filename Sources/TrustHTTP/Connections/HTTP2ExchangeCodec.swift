import NIOCore
import NIOHTTP1
import NIOHTTP2

/// Carries one exchange over an HTTP/2 stream channel: HTTP/2 frames below, NIOHTTP1's request and response parts
/// above (the exchange handler, and the decompressor when there is one), through ``HTTP2ExchangeFraming``, which says
/// what it refuses and why it replaces swift-nio-http2's HTTP/1 codec. A refused response fails the exchange (an error
/// passed on) and nothing after it is read.
final class HTTP2ExchangeCodec: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTP2Frame.FramePayload

    private var framing = HTTP2ExchangeFraming()
    private var failed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        do {
            let (first, second) = try framing.read(unwrapInboundIn(data))
            if let first { context.fireChannelRead(wrapInboundOut(first)) }
            if let second { context.fireChannelRead(wrapInboundOut(second)) }
        } catch {
            failed = true
            context.fireErrorCaught(error)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        do {
            let (first, second) = try framing.write(unwrapOutboundIn(data), promise: promise)
            if let first { context.write(wrapOutboundOut(first.message), promise: first.promise) }
            if let second { context.write(wrapOutboundOut(second.message), promise: second.promise) }
        } catch {
            promise?.fail(error)
            context.fireErrorCaught(error)
        }
    }

    func flush(context: ChannelHandlerContext) {
        if let held = framing.flush() { context.write(wrapOutboundOut(held.message), promise: held.promise) }
        context.flush()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        framing.flush()?.promise?.fail(error)
        context.fireErrorCaught(error)
    }
}

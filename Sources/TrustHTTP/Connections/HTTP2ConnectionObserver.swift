import NIOCore
import NIOHTTP2

/// Tells the pool what an HTTP/2 peer says about its connection: SETTINGS_MAX_CONCURRENT_STREAMS (RFC 9113
/// §6.5.2), so that the pool lends no more streams than the peer allows, and GOAWAY (§6.8), after which no new
/// stream may be opened on the connection. Sits after the HTTP/2 handler, which passes on the frames of stream 0;
/// what arrives before the pool observes (a server's first SETTINGS comes with the handshake) is kept and told
/// then. Used on the connection's event loop only.
final class HTTP2ConnectionObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame

    private var maximumStreams: Int?
    private var wentAway = false
    private var onSettings: ((Int) -> Void)?
    private var onGoAway: (() -> Void)?

    init() {}

    /// Calls `settings` with the peer's limit now (when known) and whenever it changes, and `goingAway` once.
    func observe(settings: @escaping (Int) -> Void, goingAway: @escaping () -> Void) {
        onSettings = settings
        onGoAway = goingAway
        if let maximumStreams { settings(maximumStreams) }
        if wentAway { goingAway() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .settings(.settings(let settings)):
            // The last value of a parameter in a frame is the one in force (§6.5.3 processes them in order).
            // A peer's first SETTINGS frame (§3.4: the first frame it sends) without the parameter leaves it at
            // its initial value, unlimited (§6.5.2). The pool must stay bounded, so the limit it then lends up
            // to is the one it assumed until SETTINGS came (100, the fewest §6.5.2 recommends allowing) — but
            // it is now known, so the pool may open another connection once this one is full.
            let value = settings.last(where: { $0.parameter == .maxConcurrentStreams })?.value
            if let value = value ?? (maximumStreams == nil ? ConnectionPoolStateMachine.assumedConcurrentStreams : nil) {
                maximumStreams = value
                onSettings?(value)
            }
        case .goAway:
            if !wentAway {
                wentAway = true
                onGoAway?()
            }
        default:
            break
        }
        context.fireChannelRead(data)
    }
}

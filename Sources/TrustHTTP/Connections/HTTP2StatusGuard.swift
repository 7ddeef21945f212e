import NIOCore
import NIOHTTP2

/// Refuses a response HEADERS frame whose `:status` is not three digits (RFC 9113 §8.3.2, RFC 9110
/// §15) before swift-nio-http2's HTTP/1 codec reads it: swift-nio-http2 1.46 force-unwraps the first
/// character of `:status` (`HPACKHeaders.isInformationalResponse`), so an empty value from a server
/// would trap the whole process (found by `Fuzz/FuzzHTTP2Frames`). Sits first in each stream channel.
final class HTTP2StatusGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload

    /// A response whose `:status` is not three digits.
    struct InvalidStatus: Error, CustomStringConvertible {
        var description: String { "HTTP/2 response with an invalid :status" }
    }

    private var failed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        if case .headers(let headers) = unwrapInboundIn(data) {
            // Each field named `:status` in any ASCII case (A–Z folded to a–z, every other byte exact), without the
            // array of values HPACKHeaders' subscript builds. That subscript matches more loosely (it clears bit 0x20
            // of each ASCII byte and skips non-ASCII positions), yet a name only it would match never gets here from
            // a server: NIOHTTP2's header block validation, on by default, refuses names that are not lowercase
            // tokens first (RFC 9113 §8.2.1), and its HTTP/1 codec reads `:status` by exact match.
            for (name, status, _) in headers.headers where HeaderName.equal(name, ":status") && !Self.isThreeDigits(status) {
                failed = true
                context.fireErrorCaught(InvalidStatus())
                return
            }
        }
        context.fireChannelRead(data)
    }

    private static func isThreeDigits(_ status: String) -> Bool {
        status.utf8.count == 3 && status.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}

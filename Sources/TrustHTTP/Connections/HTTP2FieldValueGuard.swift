import NIOCore
import NIOHTTP2

/// Refuses an HTTP/2 response (or trailer) field whose value holds a control character: any of
/// U+0000–U+0008, U+000A–U+001F or DEL (U+007F). RFC 9110 §5.5 allows only visible characters, obs-text,
/// SP and HTAB in a field value, and RFC 9113 §8.2.1 asks an HTTP/2 endpoint to treat a message with
/// characters it prohibits as malformed (§8.1.1). swift-nio-http2 refuses CR, LF and NUL (the three
/// §8.2.1 names) but passes ESC, BEL, BS and the rest; NIO's HTTP/1.1 parser refuses all of them, so
/// without this an HTTP/2 server could put terminal control sequences into what `-v` and `-i` show,
/// as an HTTP/1.1 one cannot. The response fails as an HTTP/1.1 one with such a head does
/// (``TrustHTTPClientError/ProtocolViolation/malformedHTTP2Response``; `trust get` exit 8). Sits in each stream
/// channel after ``HTTP2StatusGuard``.
final class HTTP2FieldValueGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload

    /// A response field whose value holds a control character. Names the field, never quotes the value.
    struct InvalidFieldValue: Error, CustomStringConvertible {
        /// The field's name (a token: swift-nio-http2 has checked it, RFC 9113 §8.2.1).
        var name: String
        var description: String { "HTTP/2 response field \(name) with a control character in its value" }
    }

    private var failed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        if case .headers(let headers) = unwrapInboundIn(data) {
            for (name, value, _) in headers.headers where value.utf8.contains(where: Self.isForbidden) {
                failed = true
                context.fireErrorCaught(InvalidFieldValue(name: name))
                return
            }
        }
        context.fireChannelRead(data)
    }

    /// A byte RFC 9110 §5.5 does not allow in a field value: a C0 control other than HTAB, or DEL.
    static func isForbidden(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != 0x09) || byte == 0x7F
    }
}

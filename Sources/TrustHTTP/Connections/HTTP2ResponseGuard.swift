import NIOCore
import NIOHTTP2

/// Refuses, in each HTTP/2 stream channel before swift-nio-http2's HTTP/1 codec reads them, the response (and trailer)
/// HEADERS frames that codec would trap on or pass through unchecked. One handler for both checks: each handler in a
/// stream's pipeline costs two allocations (the handler and its context) for every request.
///
/// - A `:status` that is not three digits (RFC 9113 §8.3.2, RFC 9110 §15): swift-nio-http2 1.46 force-unwraps the
///   first character of `:status` (`HPACKHeaders.isInformationalResponse`), so an empty value from a server would trap
///   the whole process (found by `Fuzz/FuzzHTTP2Frames`).
/// - A field value holding a control character: any of U+0000–U+0008, U+000A–U+001F or DEL (U+007F). RFC 9110 §5.5
///   allows only visible characters, obs-text, SP and HTAB in a field value, and RFC 9113 §8.2.1 asks an HTTP/2
///   endpoint to treat a message with characters it prohibits as malformed (§8.1.1). swift-nio-http2 refuses CR, LF
///   and NUL (the three §8.2.1 names) but passes ESC, BEL, BS and the rest; NIO's HTTP/1.1 parser refuses all of
///   them, so without this an HTTP/2 server could put terminal control sequences into what `-v` and `-i` show, as an
///   HTTP/1.1 one cannot. The response fails as an HTTP/1.1 one with such a head does
///   (``TrustHTTPClientError/ProtocolViolation/malformedHTTP2Response``; `trust get` exit 8).
///
/// The status is checked first, over every field, then the values.
final class HTTP2ResponseGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload

    /// A response whose `:status` is not three digits.
    struct InvalidStatus: Error, CustomStringConvertible {
        var description: String { "HTTP/2 response with an invalid :status" }
    }

    /// A response field whose value holds a control character. Names the field, never quotes the value.
    struct InvalidFieldValue: Error, CustomStringConvertible {
        /// The field's name (a token: swift-nio-http2 has checked it, RFC 9113 §8.2.1).
        var name: String
        var description: String { "HTTP/2 response field \(name) with a control character in its value" }
    }

    private var failed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        if case .headers(let headers) = unwrapInboundIn(data), let error = Self.violation(in: headers) {
            failed = true
            context.fireErrorCaught(error)
            return
        }
        context.fireChannelRead(data)
    }

    /// What is wrong with `fields`, if anything: an invalid `:status` first, then a forbidden value.
    static func violation(in headers: HTTP2Frame.FramePayload.Headers) -> (any Error)? {
        let fields = headers.headers
        // Each field named `:status` in any ASCII case (A–Z folded to a–z, every other byte exact), without the
        // array of values HPACKHeaders' subscript builds. That subscript matches more loosely (it clears bit 0x20
        // of each ASCII byte and skips non-ASCII positions), yet a name only it would match never gets here from
        // a server: NIOHTTP2's header block validation, on by default, refuses names that are not lowercase
        // tokens first (RFC 9113 §8.2.1), and its HTTP/1 codec reads `:status` by exact match.
        for (name, status, _) in fields where HeaderName.equal(name, ":status") && !isThreeDigits(status) {
            return InvalidStatus()
        }
        for (name, value, _) in fields where value.utf8.contains(where: isForbidden) {
            return InvalidFieldValue(name: name)
        }
        return nil
    }

    private static func isThreeDigits(_ status: String) -> Bool {
        status.utf8.count == 3 && status.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// A byte RFC 9110 §5.5 does not allow in a field value: a C0 control other than HTAB, or DEL.
    static func isForbidden(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != 0x09) || byte == 0x7F
    }
}

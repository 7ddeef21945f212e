import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// One exchange's messages on an HTTP/2 stream, as the exchange handler speaks them (NIOHTTP1's request and response
/// parts): the request head becomes a HEADERS frame (RFC 9113 §8.3.1), the body DATA frames, and the last frame of the
/// request carries END_STREAM; the response's HEADERS and DATA frames become an interim or final head, body bytes,
/// trailers and the end (§8.1). A value type: the stream's ``HTTPExchangeHandler`` drives it (``HTTP2ExchangeCodec``
/// does when a decompressor sits between them), and tests drive it without a channel.
///
/// Written here rather than taken from swift-nio-http2's `HTTP2FramePayloadToHTTP1ClientCodec` because that codec
/// traps on what a server controls: it force-unwraps the first character of `:status` (an empty value stopped the
/// process, found by `Fuzz/FuzzHTTP2Frames`), and stops the process on a header block after the trailers or a
/// response before a request (`preconditionFailure`). It also passes field values with control characters, adds a
/// `transfer-encoding: chunked` field to a response that never had one, and builds each head twice (an HTTP/1
/// field list, then the HTTP/2 one), two allocations of every request. Here:
///
/// - a `:status` that is not three digits, a `101` (RFC 9113 §8.6) and an interim response that ends the stream
///   (§8.1) are refused (``InvalidStatus``); a response without `:status` or with two is refused as swift-nio-http2
///   refuses it (its header block validation, on by default, refuses them first);
/// - a field value holding a control character — any of U+0000–U+0008, U+000A–U+001F or DEL (U+007F) — is refused
///   (``InvalidFieldValue``): RFC 9110 §5.5 allows only visible characters, obs-text, SP and HTAB, and RFC 9113
///   §8.2.1 asks an endpoint to treat a message with characters it prohibits as malformed (§8.1.1). swift-nio-http2
///   refuses CR, LF and NUL (the three §8.2.1 names) and passes ESC, BEL, BS and the rest; NIO's HTTP/1.1 parser
///   refuses all of them, so without this an HTTP/2 server could put terminal control sequences into what `-v` and
///   `-i` show, as an HTTP/1.1 one cannot;
/// - DATA before the final head and a header block after the trailers are refused (§8.1: a response is headers,
///   then data, then trailers);
/// - the request's fields lose what is specific to one HTTP/1.1 connection (§8.2.2): `connection`, `keep-alive`,
///   `proxy-connection`, `transfer-encoding`, `upgrade` and any field the `connection` field names; names are
///   lowercased (§8.2.1); `host` becomes `:authority` (§8.3.1).
struct HTTP2ExchangeFraming: ExchangeFraming {
    /// A response whose `:status` is not three digits, is `101`, or is interim and ends the stream.
    struct InvalidStatus: Error, CustomStringConvertible {
        var description: String { "HTTP/2 response with an invalid :status" }
    }

    /// A response field whose value holds a control character. Names the field, never quotes the value.
    struct InvalidFieldValue: Error, CustomStringConvertible {
        /// The field's name (a token: swift-nio-http2 has checked it, RFC 9113 §8.2.1).
        var name: String
        var description: String { "HTTP/2 response field \(name) with a control character in its value" }
    }

    /// A response whose frames come out of order: DATA before the final head, or a header block after the trailers
    /// or after the stream's end (RFC 9113 §8.1).
    struct FrameOutOfOrder: Error, CustomStringConvertible {
        var description: String { "HTTP/2 response frames out of order" }
    }

    typealias PendingWrite = FramedWrite<HTTP2Frame.FramePayload>

    /// Where the response is.
    private enum Response {
        /// No final head yet (interim ones may come).
        case head
        /// The final head has come: DATA, then perhaps trailers.
        case body
        /// The stream's end has come.
        case ended
    }

    private var response = Response.head
    /// The request's last frame, held until the next part, a flush or the end, so that the end can ride on it
    /// (END_STREAM) rather than take an empty DATA frame of its own.
    private var pending: PendingWrite?

    // MARK: The request

    /// The frames `part` of the request releases: at most the one held before and, at the end, the last.
    mutating func write(_ part: HTTPClientRequestPart, promise: EventLoopPromise<Void>?) throws -> (PendingWrite?, PendingWrite?) {
        switch part {
        case .head(let head):
            let held = pending
            pending = PendingWrite(message: .headers(.init(headers: try Self.requestFields(head))), promise: promise)
            return (held, nil)
        case .body(let body):
            let held = pending
            pending = PendingWrite(message: .data(.init(data: body)), promise: promise)
            return (held, nil)
        case .end(let trailers):
            guard var last = pending.take() else {
                // Nothing held: the end goes alone, on an empty DATA frame or on the trailers.
                return (PendingWrite(message: Self.end(trailers), promise: promise), nil)
            }
            if let trailers {
                return (last, PendingWrite(message: Self.end(trailers), promise: promise))
            }
            switch last.message {
            case .headers(var headers):
                headers.endStream = true
                last.message = .headers(headers)
            case .data(var data):
                data.endStream = true
                last.message = .data(data)
            default:
                break
            }
            if let promise {
                if let held = last.promise { held.futureResult.cascade(to: promise) } else { last.promise = promise }
            }
            return (last, nil)
        }
    }

    /// The frame held for the end, released by a flush.
    mutating func flush() -> PendingWrite? {
        pending.take()
    }

    /// The frame that ends the request: its trailers, or an empty DATA frame.
    private static func end(_ trailers: HTTPHeaders?) -> HTTP2Frame.FramePayload {
        guard let trailers else { return .data(.init(data: .byteBuffer(ByteBuffer()), endStream: true)) }
        var fields = HPACKHeaders()
        fields.reserveCapacity(trailers.count)
        appendRegular(trailers, to: &fields, dropping: connectionOptions(of: trailers))
        return .headers(.init(headers: fields, endStream: true))
    }

    /// The request head's HTTP/2 fields: the four pseudo-header fields first (RFC 9113 §8.3), then the rest, in one
    /// list sized once.
    static func requestFields(_ head: HTTPRequestHead) throws -> HPACKHeaders {
        var authority: String?
        for (name, value) in head.headers where HeaderName.equal(name, "host") {
            guard authority == nil else { throw NIOHTTP2Errors.duplicateHostHeader() }
            authority = value
        }
        guard let authority else { throw NIOHTTP2Errors.missingHostHeader() }
        var fields = HPACKHeaders()
        fields.reserveCapacity(head.headers.count + 3)
        fields.add(name: ":method", value: head.method.rawValue)
        fields.add(name: ":scheme", value: "https")
        fields.add(name: ":authority", value: authority)
        fields.add(name: ":path", value: head.uri)
        appendRegular(head.headers, to: &fields, dropping: connectionOptions(of: head.headers))
        return fields
    }

    /// The fields the `connection` field names (RFC 9110 §7.6.1), lowercased; none for most requests.
    private static func connectionOptions(of headers: HTTPHeaders) -> [String] {
        guard headers.contains(name: "connection") else { return [] }
        return headers[canonicalForm: "connection"].map { $0.lowercased() }
    }

    /// Appends `headers` to `fields` but `host` and the connection-specific fields (RFC 9113 §8.2.2), with names
    /// lowercased (§8.2.1).
    private static func appendRegular(_ headers: HTTPHeaders, to fields: inout HPACKHeaders, dropping options: [String]) {
        for (name, value) in headers {
            let lowercased = name.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) ? name.lowercased() : name
            switch lowercased {
            case "host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade": continue
            default:
                if options.contains(lowercased) { continue }
                fields.add(name: lowercased, value: value)
            }
        }
    }

    // MARK: The response

    /// The response parts `payload` carries: a head (and the end, when its frame ends the stream), body bytes (and the
    /// end), or the trailers; frames with no part in a response (WINDOW_UPDATE, PRIORITY…) carry none.
    mutating func read(_ payload: HTTP2Frame.FramePayload) throws -> (HTTPClientResponsePart?, HTTPClientResponsePart?) {
        switch payload {
        case .headers(let headers):
            switch response {
            case .head: return try readHead(headers)
            case .body:
                try Self.checkValues(headers.headers)
                response = .ended
                return (.end(Self.regularFields(of: headers.headers)), nil)
            case .ended: throw FrameOutOfOrder()
            }
        case .data(let data):
            guard response == .body else { throw FrameOutOfOrder() }
            guard case .byteBuffer(let bytes) = data.data else { throw FrameOutOfOrder() }
            guard data.endStream else { return (.body(bytes), nil) }
            response = .ended
            return bytes.readableBytes == 0 ? (.end(nil), nil) : (.body(bytes), .end(nil))
        default:
            return (nil, nil)
        }
    }

    /// An interim or final response head.
    private mutating func readHead(_ headers: HTTP2Frame.FramePayload.Headers) throws -> (HTTPClientResponsePart?, HTTPClientResponsePart?) {
        let status = try Self.status(of: headers.headers)
        try Self.checkValues(headers.headers)
        let head = HTTPResponseHead(version: .http2, status: HTTPResponseStatus(statusCode: status), headers: Self.regularFields(of: headers.headers))
        if status < 200 {
            // Interim: more heads follow; one that ends the stream is malformed (RFC 9113 §8.1).
            guard !headers.endStream else { throw InvalidStatus() }
            return (.head(head), nil)
        }
        guard headers.endStream else {
            response = .body
            return (.head(head), nil)
        }
        response = .ended
        return (.head(head), .end(nil))
    }

    /// The response's `:status`: exactly one, three digits (RFC 9113 §8.3.2, RFC 9110 §15), not `101` (RFC 9113 §8.6).
    /// The field is matched in any ASCII case (A–Z folded to a–z, every other byte exact), though a name only that
    /// would match never gets here from a server: swift-nio-http2's header block validation, on by default, refuses
    /// names that are not lowercase tokens first (RFC 9113 §8.2.1).
    private static func status(of fields: HPACKHeaders) throws -> Int {
        var status: Int?
        for (name, value, _) in fields where HeaderName.equal(name, ":status") {
            // Each value is checked before a second one is refused as such: an invalid value is named first.
            guard value.utf8.count == 3, value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { throw InvalidStatus() }
            guard status == nil else { throw NIOHTTP2Errors.duplicatePseudoHeader(":status") }
            status = value.utf8.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        }
        guard let status else { throw NIOHTTP2Errors.missingPseudoHeader(":status") }
        guard status >= 100, status != 101 else { throw InvalidStatus() }
        return status
    }

    /// The fields of a received block but its pseudo-header fields (which start with `:`), in order, in one list sized once.
    private static func regularFields(of block: HPACKHeaders) -> HTTPHeaders {
        var fields: [(String, String)] = []
        fields.reserveCapacity(block.count)
        for (name, value, _) in block where name.utf8.first != UInt8(ascii: ":") { fields.append((name, value)) }
        return HTTPHeaders(fields)
    }

    /// Refuses a field value with a byte RFC 9110 §5.5 does not allow.
    private static func checkValues(_ fields: HPACKHeaders) throws {
        for (name, value, _) in fields where value.utf8.contains(where: isForbidden) {
            throw InvalidFieldValue(name: name)
        }
    }

    /// A byte RFC 9110 §5.5 does not allow in a field value: a C0 control other than HTAB, or DEL.
    static func isForbidden(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != 0x09) || byte == 0x7F
    }
}

import Crypto
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOSSL
import TrustNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The lab servers' HTTP application, the same over HTTP/1.1 and HTTP/2 (behind NIOHTTP2's
/// HTTP/1 codec):
///
/// | route | response |
/// |---|---|
/// | `GET /` | `hello from NAME` |
/// | `GET /bytes/N` | N bytes, streamed in 16 KiB parts (each `a`–`z` repeating from `a`) |
/// | `GET /status/N` | status N |
/// | `GET /redirect?to=URL&status=302` | a redirect |
/// | `GET /headers` | the request headers, one `name: value` per line |
/// | `GET /slow?ms=N` | `slow` after N milliseconds |
/// | `GET /close` | `closing`, then the connection ends: `connection: close` (HTTP/1.1), a graceful GOAWAY (HTTP/2: the streams already open finish first) |
/// | `* /echo` | the method on the first line, then the request body |
/// | `* /upload`, `* /upload/NAME` | what arrived: `bytes N`, `sha256 HEX`, `framing content-length|chunked|none`, `expect VALUE|none` |
/// | `* /expect/refuse` | with `Expect: 100-continue`: `413` and the connection closed, before the body (else as `/upload`) |
/// | `* /expect/417` | with `Expect: 100-continue`: `417 Expectation Failed`, connection closed (else as `/upload`) |
/// | `* /expect/ignore` | never answers `100 Continue`; as `/upload` once the body is in |
/// | `GET /whoami` | the verified client certificate's subject and pin and its validated chain's length, or `anonymous` |
/// | `/basic`, `/digest?…`, `/multi`, `/shifting-realm` | HTTP authentication (see ``LabHTTPAuthentication``) |
/// | `POST /reports` | stores the body (a pin-failure report collector, see ``LabServer/reports``); `204` |
///
/// Every other request with `Expect: 100-continue` is answered `100 Continue` at once (RFC 9110 §10.1.1).
/// `HEAD` gets the head `GET` would get, without content (RFC 9110 §9.3.2) — except `HEAD /bytes/N?head-content=1`,
/// which sends the N bytes anyway, as a broken server would, for clients to prove they are not stalled by it.
final class LabHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// 16 KiB of `a`–`z` repeating (26 × 630 + 4): the unit `/bytes/N` is served in.
    static let chunk: ByteBuffer = {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        return ByteBuffer(bytes: (0..<16_384).map { alphabet[$0 % alphabet.count] })
    }()

    let name: String
    /// What client authentication decided on this connection (for `/whoami`).
    let client: ClientAuthenticationRecord?
    /// The server's HTTP authentication (shared by its connections).
    let authentication: LabHTTPAuthentication
    /// Where `POST /reports` bodies go (shared by the server's connections).
    let reports: LabReportInbox
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()
    /// The current request was answered before its body (an expectation refused): the rest is ignored.
    private var answeredEarly = false
    /// What is left of a `/bytes/N` body, written only as the channel takes it (its writability): a client that
    /// reads slowly holds the server to its socket and TLS buffers, never to N bytes queued.
    private var unsent: (remaining: Int, keepAlive: Bool)?
    /// ``sendMore(context:)`` is writing (a write that changes the writability calls it again).
    private var sendingMore = false

    init(
        name: String, client: ClientAuthenticationRecord? = nil, authentication: LabHTTPAuthentication = LabHTTPAuthentication(),
        reports: LabReportInbox = LabReportInbox()
    ) {
        self.name = name
        self.client = client
        self.authentication = authentication
        self.reports = reports
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
            answeredEarly = false
            if head.headers["expect"].first?.lowercased() == "100-continue" { answerExpectation(of: head, context: context) }
        case .body(var part):
            guard !answeredEarly else { return }
            body.writeBuffer(&part)
        case .end:
            guard let head, !answeredEarly else {
                self.head = nil
                return
            }
            respond(context: context, to: head)
            self.head = nil
        }
    }

    /// `Expect: 100-continue`: `100 Continue`, a refusal before the body, or nothing (`/expect/ignore`).
    private func answerExpectation(of head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = URLComponents(string: "http://lab" + head.uri)?.path ?? "/"
        switch path {
        case "/expect/refuse":
            answeredEarly = true
            send(context: context, request: head, status: .payloadTooLarge, body: "refused before the body\n", closesConnection: true)
        case "/expect/417":
            answeredEarly = true
            send(context: context, request: head, status: .expectationFailed, body: "no expectations here\n", closesConnection: true)
        case "/expect/ignore":
            break
        default:
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
        }
    }

    /// What `/upload` saw of the request body.
    private func uploadReport(_ request: HTTPRequestHead) -> String {
        let digest = SHA256.hash(data: Array(body.readableBytesView)).hexText()
        let framing =
            request.headers.contains(name: "content-length")
            ? "content-length"
            : request.headers["transfer-encoding"].first?.lowercased() == "chunked" ? "chunked" : "none"
        return "bytes \(body.readableBytes)\nsha256 \(digest)\nframing \(framing)\nexpect \(request.headers["expect"].first ?? "none")\n"
    }

    /// `("gzip", N)` for `/gzip/N`, `("deflate", N)` for `/deflate/N`, `("gzip-corrupt", 1000)` for `/gzip-corrupt`.
    private static func compressedRoute(_ path: String) -> (String, Int)? {
        if path == "/gzip-corrupt" { return ("gzip-corrupt", 1000) }
        for coding in ["gzip", "deflate"] where path.hasPrefix("/\(coding)/") {
            guard let count = Int(path.dropFirst(coding.count + 2)), (0...100_000_000).contains(count) else { return nil }
            return (coding, count)
        }
        return nil
    }

    /// Requests seen per `/flaky` id, across connections and servers of this process.
    static let flakyCounts = NIOLockedValueBox<[String: Int]>([:])

    private func respond(context: ChannelHandlerContext, to request: HTTPRequestHead) {
        let components = URLComponents(string: "http://lab" + request.uri)
        let path = components?.path ?? "/"
        let query = Dictionary((components?.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { a, _ in a })
        let keepAlive = request.isKeepAlive

        if let verdict = authentication.handle(
            path: path, query: query, method: request.method.rawValue, uri: request.uri,
            headers: request.headers.map { ($0.name, $0.value) }, body: Array(body.readableBytesView))
        {
            send(context: context, request: request, status: HTTPResponseStatus(statusCode: verdict.status), body: verdict.body, extra: verdict.headers)
            return
        }

        if path.hasPrefix("/bytes/"), let count = Int(path.dropFirst("/bytes/".count)), count >= 0 {
            var headers = HTTPHeaders([("content-type", "application/octet-stream"), ("content-length", String(count))])
            if !keepAlive { headers.add(name: "connection", value: "close") }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: .ok, headers: headers))), promise: nil)
            unsent = (request.method == .HEAD && query["head-content"] != "1" ? 0 : count, keepAlive)
            sendMore(context: context)
            return
        }
        // Compressed bodies (LabGzip): /gzip/N and /deflate/N are N bytes of text with that content
        // coding; /gzip-corrupt is a gzip body whose CRC-32 is wrong.
        if let (coding, count) = Self.compressedRoute(path) {
            let text = Array(String(repeating: "swift-trust lab text\n", count: count / 21 + 1).utf8.prefix(count))
            var encoded = coding == "deflate" ? LabGzip.zlib(text) : LabGzip.gzip(text)
            if coding == "gzip-corrupt" { encoded[encoded.count - 5] ^= 0xFF }
            var headers = HTTPHeaders([
                ("content-type", "text/plain"), ("content-encoding", coding == "deflate" ? "deflate" : "gzip"),
                ("content-length", String(encoded.count)),
            ])
            if !keepAlive { headers.add(name: "connection", value: "close") }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: .ok, headers: headers))), promise: nil)
            if request.method != .HEAD {
                context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: encoded)))), promise: nil)
            }
            finish(context: context, keepAlive: keepAlive)
            return
        }
        // /flaky?id=X&fail=N&status=S[&retry-after=T]: the first N requests with that id get status S
        // (503 by default, with Retry-After: T when given), the next ones 200 — for clients that retry.
        if path == "/flaky", let id = query["id"] {
            let failures = Int(query["fail"] ?? "") ?? 1
            let seen = Self.flakyCounts.withLockedValue { counts -> Int in
                counts[id, default: 0] += 1
                return counts[id]!
            }
            if seen <= failures {
                let status = Int(query["status"] ?? "") ?? 503
                let extra = query["retry-after"].map { [("retry-after", $0)] } ?? []
                send(context: context, request: request, status: HTTPResponseStatus(statusCode: status), body: "failure \(seen) of \(failures)\n", extra: extra)
            } else {
                send(context: context, request: request, status: .ok, body: "ok after \(failures) failures\n")
            }
            return
        }
        if path.hasPrefix("/status/"), let code = Int(path.dropFirst("/status/".count)) {
            send(context: context, request: request, status: HTTPResponseStatus(statusCode: code), body: "status \(code)\n")
            return
        }
        switch path {
        case "/reports" where request.method == .POST:
            reports.append(Data(body.readableBytesView))
            send(context: context, request: request, status: .noContent, body: "")
        case "/":
            send(context: context, request: request, status: .ok, body: "hello from \(name)\n")
        case "/redirect":
            let status = Int(query["status"] ?? "") ?? 302
            send(context: context, request: request, status: HTTPResponseStatus(statusCode: status), body: "", extra: [("location", query["to"] ?? "/")])
        case "/close":
            // An HTTP/2 stream's parent is the connection (an HTTP/1.1 connection's is the listening socket).
            if request.version.major == 2, let connection = context.channel.parent,
                let streamID = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
            {
                // HTTP/2: GOAWAY naming this stream as the last one, the response, then the connection
                // closes once every stream still open (this one, and any the client opened before it) is done:
                // the connection's LabGracefulClose (LabServer.configureHTTP2) sees to it.
                let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: streamID, errorCode: .noError, opaqueData: nil))
                connection.writeAndFlush(goAway, promise: nil)
                send(context: context, request: request, status: .ok, body: "closing\n")
                (try? connection.pipeline.syncOperations.handler(type: LabGracefulClose.self))?.closeWhenIdle()
            } else {
                send(context: context, request: request, status: .ok, body: "closing\n", closesConnection: true)
            }
        case "/whoami":
            // The connection's record and the validated chain NIOSSL kept (what `Channel.verifiedClient()` gives a
            // framework's handler) must name the same client.
            let recorded = client?.verifiedClient
            // An HTTP/2 stream's TLS handler is on its parent, the connection (same event loop); an HTTP/1
            // connection's parent is the listening channel, which is not asked.
            let ownsTLS = (try? context.channel.pipeline.syncOperations.handler(type: NIOSSLHandler.self)) != nil
            let kept = try? (ownsTLS ? context.channel : context.channel.parent)?.pipeline.syncOperations.verifiedClient()
            guard recorded == kept else {
                send(context: context, request: request, status: .internalServerError, body: "the record and NIOSSL's validated chain differ\n")
                return
            }
            let who = recorded.map { "client: \($0.subject) \($0.pin)\nvalidated chain: \($0.chain.count) certificates" } ?? "anonymous"
            send(context: context, request: request, status: .ok, body: who + "\n")
        case "/headers":
            let text = request.headers.map { "\($0.name.lowercased()): \($0.value)" }.joined(separator: "\n") + "\n"
            send(context: context, request: request, status: .ok, body: text)
        case "/echo":
            var text = request.method.rawValue + "\n"
            text += body.getString(at: body.readerIndex, length: body.readableBytes) ?? ""
            send(context: context, request: request, status: .ok, body: text)
        case _ where ["/upload", "/expect/refuse", "/expect/417", "/expect/ignore"].contains(path) || path.hasPrefix("/upload/"):
            send(context: context, request: request, status: .ok, body: uploadReport(request))
        case "/slow":
            let delay = Int64(query["ms"] ?? "") ?? 1000
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(delay)) {
                let (handler, context) = loopBound.value
                handler.send(context: context, request: request, status: .ok, body: "slow\n")
            }
        default:
            send(context: context, request: request, status: .notFound, body: "not found\n")
        }
    }

    private func send(
        context: ChannelHandlerContext, request: HTTPRequestHead, status: HTTPResponseStatus, body text: String, extra: [(String, String)] = [],
        closesConnection: Bool = false
    ) {
        let keepAlive = request.isKeepAlive && !closesConnection
        var headers = HTTPHeaders([("content-type", "text/plain; charset=utf-8"), ("content-length", String(text.utf8.count))])
        for (name, value) in extra { headers.add(name: name, value: value) }
        if !keepAlive { headers.add(name: "connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
        if !text.isEmpty && request.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: text)))), promise: nil)
        }
        finish(context: context, keepAlive: keepAlive)
    }

    func channelInactive(context: ChannelHandlerContext) {
        unsent = nil  // the client is gone: nothing more of a `/bytes/N` body is written
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.fireErrorCaught(error)
    }

    /// Writes what is left of a `/bytes/N` body while the channel is writable; the rest waits for
    /// ``channelWritabilityChanged(context:)``. A write may change the writability at once (and call back here):
    /// that call returns, and this loop goes on. Once a write fails (a client that dropped the body; an HTTP/2 stream
    /// it reset, whose writes NIOHTTP2 drops while the stream channel still reads as active and writable) the rest is
    /// not written, and the response ends: each write would fail at once, and the loop would spin through the rest of
    /// a 1 GB body on the event loop that every other connection of the process shares.
    private func sendMore(context: ChannelHandlerContext) {
        guard !sendingMore else { return }
        sendingMore = true
        defer { sendingMore = false }
        while let (remaining, keepAlive) = unsent, remaining > 0, context.channel.isActive, context.channel.isWritable {
            let size = min(remaining, Self.chunk.readableBytes)
            unsent = (remaining - size, keepAlive)
            let written = context.eventLoop.makePromise(of: Void.self)
            // On this handler's loop (the promise is its channel's): the handler and its context need no hop.
            written.futureResult.assumeIsolated().whenFailure { [self] _ in
                // The rest is not written; the response still ends (its end's write fails too if the channel is gone).
                guard let (_, keepAlive) = unsent else { return }
                unsent = (0, keepAlive)
                sendMore(context: context)
            }
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(Self.chunk.getSlice(at: 0, length: size) ?? ByteBuffer()))), promise: written)
        }
        guard let (remaining, keepAlive) = unsent, remaining == 0 else { return }
        unsent = nil
        finish(context: context, keepAlive: keepAlive)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { sendMore(context: context) }
        context.fireChannelWritabilityChanged()
    }

    private func finish(context: ChannelHandlerContext, keepAlive: Bool) {
        let promise: EventLoopPromise<Void>? = keepAlive ? nil : context.eventLoop.makePromise()
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: promise)
        if let promise {
            let channel = context.channel
            promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

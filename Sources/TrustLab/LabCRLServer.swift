import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A CRL distribution point on 127.0.0.1 (plain HTTP/1.1, a random port), as a CA publishes one: `GET /NAME`
/// answers the DER CRL published under NAME with `content-type: application/pkix-crl`, an `ETag` and a
/// `Last-Modified`, and `304 Not Modified` to a request whose `If-None-Match` names the current tag. It counts the
/// requests per name, so tests can see a cache and one fetch in flight per URL at work; a name can be delayed.
/// It serves a CA's other publications the same way: issuer certificates for Authority Information Access
/// (`application/pkix-cert`, `application/pkcs7-mime`), with the caching headers given, or an answer that never ends.
public final class LabCRLServer: Sendable {
    private struct Published: Sendable {
        var der: [UInt8]
        var entityTag: String
        var delay: TimeAmount
        var contentType = "application/pkix-crl"
        var cacheControl: String?
        /// Sends `der` again and again, never ending the body (a chunked answer with no last chunk).
        var isEndless = false
    }

    /// The port, on 127.0.0.1.
    public var port: Int { listener.port }
    private let listener: LabListener
    private let published: NIOLockedValueBox<[String: Published]>
    private let requests: NIOLockedValueBox<[String: Int]>

    private init(listener: LabListener, published: NIOLockedValueBox<[String: Published]>, requests: NIOLockedValueBox<[String: Int]>) {
        self.listener = listener
        self.published = published
        self.requests = requests
    }

    /// Starts an empty distribution point.
    public static func start(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> LabCRLServer {
        let published = NIOLockedValueBox<[String: Published]>([:])
        let requests = NIOLockedValueBox<[String: Int]>([:])
        let listener = try await LabListener.bind(group: group) { channel, _ in
            try channel.pipeline.syncOperations.configureHTTPServerPipeline()
            try channel.pipeline.syncOperations.addHandler(Handler(published: published, requests: requests))
        }
        return LabCRLServer(listener: listener, published: published, requests: requests)
    }

    /// The URL of `name`.
    public func url(_ name: String) -> String { "http://127.0.0.1:\(port)/\(name)" }

    /// Publishes (or replaces) `crl` under `name`, answered after `delay`.
    public func publish(_ crl: CertificateRevocationList, as name: String, delay: TimeAmount = .zero) {
        publish(bytes: crl.derBytes, as: name, delay: delay)
    }

    /// Publishes any bytes under `name` (a malformed CRL, say), answered after `delay`.
    public func publish(bytes: [UInt8], as name: String, delay: TimeAmount = .zero) {
        publish(bytes: bytes, as: name, contentType: "application/pkix-crl", delay: delay)
    }

    /// Publishes any bytes under `name` with `content-type` and, when given, `cache-control`, answered after `delay`.
    package func publish(bytes: [UInt8], as name: String, contentType: String, cacheControl: String? = nil, delay: TimeAmount = .zero) {
        var hasher = Hasher()
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        let tag = "\"\(String(UInt(bitPattern: hasher.finalize()), radix: 16))-\(bytes.count)\""
        let entry = Published(der: bytes, entityTag: tag, delay: delay, contentType: contentType, cacheControl: cacheControl)
        published.withLockedValue { $0[name] = entry }
    }

    /// Publishes under `name` an answer whose body never ends: 16 KiB chunks for as long as the client reads.
    package func publishEndless(as name: String) {
        let entry = Published(der: [UInt8](repeating: 0x30, count: 16 << 10), entityTag: "\"endless\"", delay: .zero, isEndless: true)
        published.withLockedValue { $0[name] = entry }
    }

    /// Requests for `name` so far (a `304` counts too).
    public func requestCount(_ name: String) -> Int { requests.withLockedValue { $0[name] ?? 0 } }

    /// Requests for `name` answered `304 Not Modified` (their `If-None-Match` named the current tag).
    public func notModifiedCount(_ name: String) -> Int { requests.withLockedValue { $0["304 " + name] ?? 0 } }

    /// Stops listening and closes every connection.
    public func shutdown() async { await listener.close() }

    private final class Handler: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let published: NIOLockedValueBox<[String: Published]>
        let requests: NIOLockedValueBox<[String: Int]>
        private var head: HTTPRequestHead?

        init(published: NIOLockedValueBox<[String: Published]>, requests: NIOLockedValueBox<[String: Int]>) {
            self.published = published
            self.requests = requests
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): self.head = head
            case .body: break
            case .end:
                guard let head else { return }
                self.head = nil
                let name = String(head.uri.drop(while: { $0 == "/" }))
                requests.withLockedValue { $0[name, default: 0] += 1 }
                let entry = published.withLockedValue { $0[name] }
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: entry?.delay ?? .zero) {
                    let (handler, context) = loopBound.value
                    handler.respond(context: context, head: head, entry: entry)
                }
            }
        }

        private func respond(context: ChannelHandlerContext, head: HTTPRequestHead, entry: Published?) {
            var headers = HTTPHeaders()
            var status = HTTPResponseStatus.notFound
            var body: [UInt8] = Array("no such CRL\n".utf8)
            if let entry {
                headers.add(name: "etag", value: entry.entityTag)
                headers.add(name: "last-modified", value: "Mon, 02 Nov 2026 00:00:00 GMT")
                if head.headers["if-none-match"].contains(entry.entityTag) {
                    let name = String(head.uri.drop(while: { $0 == "/" }))
                    requests.withLockedValue { $0["304 " + name, default: 0] += 1 }
                    status = .notModified
                    body = []
                } else if entry.isEndless {
                    headers.add(name: "content-type", value: entry.contentType)
                    headers.add(name: "transfer-encoding", value: "chunked")
                    context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))), promise: nil)
                    sendForever(context: context, chunk: ByteBuffer(bytes: entry.der))
                    return
                } else {
                    status = .ok
                    body = entry.der
                    headers.add(name: "content-type", value: entry.contentType)
                    if let cacheControl = entry.cacheControl { headers.add(name: "cache-control", value: cacheControl) }
                }
            }
            headers.add(name: "content-length", value: String(body.count))
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
            if !body.isEmpty { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }

        /// Writes `chunk` whenever the last one is written, until the client goes.
        private func sendForever(context: ChannelHandlerContext, chunk: ByteBuffer) {
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(chunk)))).whenComplete { result in
                guard case .success = result else { return }
                let (handler, context) = loopBound.value
                guard context.channel.isActive else { return }
                handler.sendForever(context: context, chunk: chunk)
            }
        }
    }
}

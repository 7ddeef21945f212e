import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An HTTPS/1.1 server on 127.0.0.1 (a random port) that serves bytes published under paths — a configuration
/// server or CDN for tests: `GET /NAME` answers what was published as NAME (`200`, `content-length`), anything else
/// `404`. It presents the chain it is started with, so a client can pin it.
public final class LabFileServer: Sendable {
    /// The port, on 127.0.0.1.
    public var port: Int { listener.port }
    /// The host name a client should use (the certificate's name; connect to 127.0.0.1).
    public let host: String
    private let listener: LabListener
    private let files: NIOLockedValueBox<[String: [UInt8]]>

    private init(listener: LabListener, host: String, files: NIOLockedValueBox<[String: [UInt8]]>) {
        self.listener = listener
        self.host = host
        self.files = files
    }

    /// Starts a server presenting `chain` (leaf first) with `privateKey`, answering for `host`.
    public static func start(
        host: String, chain: [Certificate], privateKey: Certificate.PrivateKey, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> LabFileServer {
        var configuration = try LabServer.serverConfiguration(chain: chain, privateKey: privateKey)
        configuration.applicationProtocols = ["http/1.1"]
        let context = try NIOSSLContext(configuration: configuration)
        let files = NIOLockedValueBox<[String: [UInt8]]>([:])
        let listener = try await LabListener.bind(group: group) { channel, _ in
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
            try channel.pipeline.syncOperations.configureHTTPServerPipeline()
            try channel.pipeline.syncOperations.addHandler(Handler(files: files))
        }
        return LabFileServer(listener: listener, host: host, files: files)
    }

    /// `https://HOST:PORT/NAME`; resolve HOST to 127.0.0.1.
    public func url(_ name: String) -> URL {
        URL(string: "https://\(host):\(port)/")?.appendingPathComponent(name) ?? URL(fileURLWithPath: "/")
    }

    /// Publishes (or replaces) `bytes` under `name`.
    public func publish(_ bytes: [UInt8], as name: String) {
        files.withLockedValue { $0[name] = bytes }
    }

    /// Stops listening and closes every connection.
    public func shutdown() async { await listener.close() }

    private final class Handler: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let files: NIOLockedValueBox<[String: [UInt8]]>
        private var head: HTTPRequestHead?

        init(files: NIOLockedValueBox<[String: [UInt8]]>) {
            self.files = files
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): self.head = head
            case .body: break
            case .end:
                guard let head else { return }
                self.head = nil
                let name = String(head.uri.drop(while: { $0 == "/" }))
                let body = files.withLockedValue { $0[name] }
                var headers = HTTPHeaders([("content-length", String(body?.count ?? 10))])
                headers.add(name: "content-type", value: "application/octet-stream")
                let status: HTTPResponseStatus = body == nil ? .notFound : .ok
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
                let bytes = body ?? Array("not found\n".utf8)
                if head.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: bytes)))), promise: nil) }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}

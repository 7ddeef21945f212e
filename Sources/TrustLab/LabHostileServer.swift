import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A server on 127.0.0.1 (a random port) that attacks its clients at the byte and frame level —
/// endless bodies, trickled or huge heads, header fields no parser should accept, redirects to other
/// schemes or in a loop, HTTP/2 frame floods — for tests of a client's limits: every connection it
/// accepts meets the same ``Behaviour``.
///
/// ```swift
/// let good = pki.servers["good"]!
/// let server = try await LabHostileServer.start(.hugeHead, host: "good.lab.test", chain: good.chain, privateKey: good.privateKey)
/// // GET https://good.lab.test:\(server.port)/ → a status line, then 16 MB of header lines.
/// ```
///
/// Over TLS the server offers `h2` only over ALPN for an HTTP/2 behaviour, `http/1.1` only for the
/// others; ``startPlain(_:host:trickleInterval:connectionTimeLimit:byteLimit:group:)`` serves the same
/// behaviours in clear text (HTTP/2 ones with prior knowledge, RFC 9113 §3.3). A connection first
/// reads the request — an HTTP/1.1 head up to its blank line, or the HTTP/2 client preface and frames
/// up to the first HEADERS — then misbehaves. The server bounds itself: it writes only as fast as the
/// socket takes the bytes (NIO writability), and closes a connection after `connectionTimeLimit` or
/// `byteLimit` bytes, or when the client closes it.
public final class LabHostileServer: Sendable {
    /// Where hostile servers run unless told otherwise: one event loop of their own, made at first
    /// use and kept for the process. A flood keeps its event loop busy for as long as the client
    /// takes it; on the process's shared loops it would lengthen every other connection's turn
    /// there — the lab's good servers', and the clients' under test — as a real attacker's server,
    /// on another machine, does not.
    public static let eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    /// How the server attacks each connection.
    public enum Behaviour: String, Sendable, CaseIterable {
        // MARK: HTTP/1.1

        /// `200` with `transfer-encoding: chunked`, then 16 KiB chunks forever (no last chunk).
        case endlessChunkedBody = "endless-chunked-body"
        /// `200` announcing `content-length: 1000000000000`, then body bytes forever.
        case endlessBody = "endless-body"
        /// `200` with `content-encoding: gzip`, chunked: a gzip stream of zeros without end, each
        /// 16 KiB chunk inflating to about 2.5 MiB (`LabGzip.zeroBombUnit`) — a "zip bomb".
        case zipBomb = "zip-bomb"
        /// A valid response head (and a 2-byte body), one byte per trickle interval (200 ms by default).
        case trickleHead = "trickle-head"
        /// A head announcing `content-length: 1000000`, then one body byte per trickle interval.
        case trickleBody = "trickle-body"
        /// A head announcing `content-length: 1000`, then silence; the connection stays open.
        case stallAfterHead = "stall-after-head"
        /// A status line, then 16 MB of header lines (16,384 of `x-filler-N: <1000 bytes>`), and finally a 2-byte body.
        case hugeHead = "huge-head"
        /// A status line, then 100,000 small header fields (and finally a 2-byte body).
        case manyHeaderFields = "many-header-fields"
        /// One header field whose value is 1 MiB long (and a 2-byte body).
        case longHeaderField = "long-header-field"
        /// 100,000 `HTTP/1.1 100 Continue` interim heads, then a `200` with a 2-byte body.
        case manyInformational = "many-informational"
        /// `302` to `file:///etc/passwd`.
        case redirectToFile = "redirect-to-file"
        /// `302` to `ftp://127.0.0.1/x`.
        case redirectToFTP = "redirect-to-ftp"
        /// `302` to `data:text/plain,hi`.
        case redirectToData = "redirect-to-data"
        /// `302` to this server again, forever: `/loop/N` redirects to `/loop/N+1` on the other one of
        /// two names for the same port — `127.0.0.1` when the request's `Host` is the server's host name,
        /// the host name otherwise — so every hop changes origin and no URL repeats. (The lab's `good`
        /// certificate covers both `good.lab.test` and `127.0.0.1`.)
        case redirectLoop = "redirect-loop"
        /// A response head with a bare CR inside a header value (`x-bare-cr: a\rb`; RFC 9112 §2.2).
        case bareCRInHeader = "bare-cr-in-header"
        /// A response head with a bare LF inside a header value, followed by what would be an injected
        /// `set-cookie` field and a second response (a response-splitting attempt).
        case bareLFInHeaderValue = "bare-lf-in-header-value"
        /// A response head with a NUL byte inside a header value (`x-nul: a\0b`; RFC 9110 §5.5).
        case nulInHeader = "nul-in-header"
        /// A response head whose `x-terminal` value holds terminal controls (``terminalControlValue``: an
        /// OSC window-title change, a clear-screen, BEL, BS; RFC 9110 §5.5 forbids them).
        case controlCharactersInHeader = "control-characters-in-header"
        /// An HTTP proxy gone wrong: answers any request (a `CONNECT`) with `HTTP/1.1 200` followed by
        /// 16 MB of header lines (as ``hugeHead``), then the blank line and silence.
        case hugeConnectReply = "huge-connect-reply"

        // MARK: HTTP/2 (after the server's SETTINGS, once the request's HEADERS arrived)

        /// SETTINGS frames (not ACKs) as fast as the socket takes them, forever.
        case settingsFlood = "settings-flood"
        /// PING frames forever.
        case pingFlood = "ping-flood"
        /// WINDOW_UPDATE frames of increment 1, alternately on the connection and on the request's stream, forever.
        case windowUpdateFlood = "window-update-flood"
        /// RST_STREAM frames on the request's stream, then on every stream id in turn (most never opened), forever.
        case resetStreamFlood = "reset-stream-flood"
        /// A response HEADERS frame without END_HEADERS, then CONTINUATION frames without END_HEADERS forever.
        case endlessContinuation = "endless-continuation"
        /// Announces `SETTINGS_HEADER_TABLE_SIZE` 2^32−1, then a response whose header block starts with a
        /// dynamic table size update to 2^32−1 (above the client's limit: RFC 7541 §6.3) and goes on with
        /// 1,024 large (4 KB) entries inserted with incremental indexing, each referenced 32 times by index
        /// — about 4 MB on the wire, 135 MB of header list — then a 2-byte body.
        case hugeHeaderTable = "huge-header-table"
        /// GOAWAY frames (`NO_ERROR`) forever, without closing; the last-stream-id goes down, then up
        /// again (RFC 9113 §6.8 forbids increasing it).
        case goAwayLoop = "goaway-loop"
        /// A `200` HEADERS frame, then 16 KiB DATA frames forever, only as fast as the client's flow-control windows allow.
        case endlessData = "endless-data"
        /// A `200` HEADERS frame, then 16 KiB DATA frames forever, ignoring the client's flow-control windows.
        case endlessDataIgnoringFlowControl = "endless-data-ignoring-flow-control"
        /// A `200` HEADERS frame (END_STREAM) whose `x-terminal` value holds ``terminalControlValue``
        /// (RFC 9113 §8.2.1 and RFC 9110 §5.5: malformed), HPACK-encoded, so no HTTP/1.1 parser sees it.
        case controlCharactersInHTTP2Header = "control-characters-in-h2-header"

        /// Whether the behaviour is an HTTP/2 one (the TLS server offers only `h2` over ALPN).
        package var isHTTP2: Bool {
            switch self {
            case .settingsFlood, .pingFlood, .windowUpdateFlood, .resetStreamFlood, .endlessContinuation, .hugeHeaderTable,
                .goAwayLoop, .endlessData, .endlessDataIgnoringFlowControl, .controlCharactersInHTTP2Header:
                true
            default:
                false
            }
        }

        /// The value of ``controlCharactersInHeader``'s and ``controlCharactersInHTTP2Header``'s `x-terminal`
        /// field: an OSC window-title change (ESC ] 0 ; … BEL), a clear-screen (ESC [ 2 J), a backspace.
        package static let terminalControlValue = "a\u{1B}]0;lab-owned\u{07}\u{1B}[2J\u{08}b"

        /// Whether the behaviour only makes sense as a proxy (the client sends `CONNECT`).
        public var isProxy: Bool { self == .hugeConnectReply }

        /// One line saying what a client meets, for `trust lab`.
        public var summary: String {
            switch self {
            case .endlessChunkedBody: "200, chunked, 16 KiB chunks forever"
            case .zipBomb: "200, content-encoding gzip, chunked: zeros inflating 159 times, forever"
            case .endlessBody: "200, content-length 10^12, bytes forever"
            case .trickleHead: "the response head one byte at a time"
            case .trickleBody: "content-length 1000000, one body byte at a time"
            case .stallAfterHead: "a head announcing 1000 bytes, then silence"
            case .hugeHead: "16 MB of header lines"
            case .manyHeaderFields: "100,000 header fields"
            case .longHeaderField: "one 1 MiB header value"
            case .manyInformational: "100,000 interim 100 Continue heads, then 200"
            case .redirectToFile: "302 to file:///etc/passwd"
            case .redirectToFTP: "302 to ftp://127.0.0.1/x"
            case .redirectToData: "302 to data:text/plain,hi"
            case .redirectLoop: "302 forever, alternating host name and 127.0.0.1"
            case .bareCRInHeader: "a bare CR inside a header value"
            case .bareLFInHeaderValue: "a bare LF inside a header value (response splitting)"
            case .nulInHeader: "a NUL byte inside a header value"
            case .controlCharactersInHeader: "terminal controls (ESC, BEL, BS) inside a header value"
            case .hugeConnectReply: "proxy: CONNECT answered 200 + 16 MB of header lines"
            case .settingsFlood: "HTTP/2 SETTINGS frames forever"
            case .pingFlood: "HTTP/2 PING frames forever"
            case .windowUpdateFlood: "HTTP/2 WINDOW_UPDATE (+1) frames forever"
            case .resetStreamFlood: "HTTP/2 RST_STREAM on every stream id forever"
            case .endlessContinuation: "HTTP/2 HEADERS, then CONTINUATION frames forever"
            case .hugeHeaderTable: "HTTP/2 HPACK table size 2^32-1 and 135 MB of indexed headers"
            case .goAwayLoop: "HTTP/2 GOAWAY frames forever, never closing"
            case .endlessData: "HTTP/2 DATA forever, within flow control"
            case .endlessDataIgnoringFlowControl: "HTTP/2 DATA forever, ignoring flow control"
            case .controlCharactersInHTTP2Header: "HTTP/2 terminal controls (ESC, BEL, BS) inside a header value"
            }
        }
    }

    /// The behaviour every connection meets.
    public let behaviour: Behaviour
    /// The port the server listens on, on 127.0.0.1.
    public let port: Int
    /// The host name a client should use (connect to 127.0.0.1).
    public let host: String
    /// `https`, or `http` for a plain server.
    public let scheme: String
    private let base: URL
    private let listener: LabListener

    /// `SCHEME://HOST:PORT`.
    public var baseURL: String { base.absoluteString }

    /// `SCHEME://HOST:PORT/PATH` (`path` starts with `/`).
    public func url(path: String = "/") -> URL {
        URL(string: baseURL + path) ?? base.appending(path: path)
    }

    /// How many connections the server has accepted so far.
    public var connectionCount: Int { listener.acceptedConnections }

    /// How many of them are still open.
    public var openConnectionCount: Int { listener.openConnections }

    private init(behaviour: Behaviour, host: String, scheme: String, base: URL, listener: LabListener) {
        self.behaviour = behaviour
        self.port = listener.port
        self.host = host
        self.scheme = scheme
        self.base = base
        self.listener = listener
    }

    /// Starts a TLS server presenting `chain` (leaf first) with `privateKey` whose connections meet `behaviour`.
    ///
    /// - Parameters:
    ///   - trickleInterval: the pause between two bytes of ``Behaviour/trickleHead`` and ``Behaviour/trickleBody``.
    ///   - connectionTimeLimit: how long a connection may last; the server then closes it.
    ///   - byteLimit: how many bytes the server writes to one connection at most before closing it.
    ///   - group: where the server runs (by default ``eventLoopGroup``, apart from the process's shared loops).
    public static func start(
        _ behaviour: Behaviour, host: String, chain: [Certificate], privateKey: Certificate.PrivateKey,
        trickleInterval: Duration = .milliseconds(200), connectionTimeLimit: Duration = .seconds(60),
        byteLimit: Int = 4 << 30,
        group: any EventLoopGroup = LabHostileServer.eventLoopGroup
    ) async throws -> LabHostileServer {
        var configuration = try LabServer.serverConfiguration(chain: chain, privateKey: privateKey)
        configuration.applicationProtocols = behaviour.isHTTP2 ? ["h2"] : ["http/1.1"]
        let context = try NIOSSLContext(configuration: configuration)
        let limits = LabHostileConnection.Limits(
            trickleInterval: TimeAmount(trickleInterval), connectionTimeLimit: TimeAmount(connectionTimeLimit), byteLimit: byteLimit)
        return try await start(behaviour, host: host, scheme: "https", limits: limits, group: group) { channel, port in
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
            try channel.pipeline.syncOperations.addHandler(
                LabHostileConnection(behaviour: behaviour, host: host, scheme: "https", port: port, limits: limits))
        }
    }

    /// Starts a plain server (no TLS) whose connections meet `behaviour`: HTTP/1.1, or HTTP/2 with
    /// prior knowledge (RFC 9113 §3.3) for an HTTP/2 behaviour. Parameters as in
    /// ``start(_:host:chain:privateKey:trickleInterval:connectionTimeLimit:byteLimit:group:)``.
    public static func startPlain(
        _ behaviour: Behaviour, host: String = "plain.lab.test",
        trickleInterval: Duration = .milliseconds(200), connectionTimeLimit: Duration = .seconds(60),
        byteLimit: Int = 4 << 30,
        group: any EventLoopGroup = LabHostileServer.eventLoopGroup
    ) async throws -> LabHostileServer {
        let limits = LabHostileConnection.Limits(
            trickleInterval: TimeAmount(trickleInterval), connectionTimeLimit: TimeAmount(connectionTimeLimit), byteLimit: byteLimit)
        return try await start(behaviour, host: host, scheme: "http", limits: limits, group: group) { channel, port in
            try channel.pipeline.syncOperations.addHandler(
                LabHostileConnection(behaviour: behaviour, host: host, scheme: "http", port: port, limits: limits))
        }
    }

    private static func start(
        _ behaviour: Behaviour, host: String, scheme: String, limits: LabHostileConnection.Limits,
        group: any EventLoopGroup,
        _ configure: @escaping @Sendable (any Channel, Int) throws -> Void
    ) async throws -> LabHostileServer {
        let listener = try await LabListener.bind(group: group, configure)
        let authority = host.contains(":") ? "[\(host)]" : host
        guard let base = URL(string: "\(scheme)://\(authority):\(listener.port)") else {
            await listener.close()
            throw LabError.cannotWrite(host, "not a host name for a URL")
        }
        return LabHostileServer(behaviour: behaviour, host: host, scheme: scheme, base: base, listener: listener)
    }

    /// Closes the listener and every connection still open.
    public func shutdown() async {
        await listener.close()
    }
}

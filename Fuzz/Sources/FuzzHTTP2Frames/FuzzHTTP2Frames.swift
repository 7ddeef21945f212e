import FuzzSupport
import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
@testable import TrustHTTP

/// The HTTP/2 client connection: ``HTTP2FloodGuard``, swift-nio-http2's handler and multiplexer with
/// the connection configuration the Session sets (`HandshakeWaiter.http2Configuration`), the
/// ``TLSErrorRecorder`` that closes the connection on a violation, and one stream as
/// `Connection.openStream` opens it (NIO's HTTP/2-to-HTTP/1 codec and ``HTTPExchangeHandler``), set
/// up by `HandshakeWaiter.configure(_:http2: true, limits:errorLog:)`.
///
/// Input: one byte — low three bits: the number of chunks minus one (1…8); bit 3: the server's
/// SETTINGS arrive before the stream is opened (else right after the request is written, as when a
/// Session sends its first request at once); then one byte per further chunk placing its start;
/// then the server's frames, after a valid empty SETTINGS frame (the server's connection preface)
/// the harness sends first. The embedded event loop runs once after each chunk (a bounded number
/// of times).
///
/// Properties (small limits: header list 4 KiB, 32 fields, 3 interim responses):
/// - nothing traps, no input hangs (libFuzzer's `-timeout`), memory stays bounded (`-rss_limit_mb`);
/// - the exchange is pending, has its head (then its body is pending, ended or failed with a typed
///   error), or failed with a typed error: an HTTP/2 or HPACK error of swift-nio-http2, a
///   `ResponseLimitExceeded`, a `ConnectionClosedError` or a `ChannelError`;
/// - a delivered head's header list is within `maximumHeadSize` (counted as RFC 7541 §4.1: name,
///   value and 32 per field) and is not an interim response;
/// - when the connection closed by itself, the `TLSErrorLog` holds a violation or the exchange
///   failed with a close;
/// - once the harness closes the connection, the exchange is no longer pending.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    test(fuzzInput(start, count))
}

/// The entry point (SwiftPM links this target with `--defsym main=FuzzHTTP2Frames_main`): libFuzzer's driver.
@_cdecl("FuzzHTTP2Frames_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in test(fuzzInput(data, count)) }
}

let limits: ResponseLimits = {
    var limits = ResponseLimits()
    limits.maximumHeadSize = 4 << 10
    limits.maximumHeaderFieldSize = 1 << 10
    limits.maximumHeaderFields = 32
    limits.maximumInformationalResponses = 3
    return limits
}()

/// An empty SETTINGS frame on stream 0: the server's connection preface (RFC 9113 §3.4).
let serverPreface: [UInt8] = [0, 0, 0, 0x04, 0, 0, 0, 0, 0]

/// The input's layout: flags, then chunk starts, then the server's bytes cut at them.
struct Layout {
    var settingsFirst = false
    var chunks: [ArraySlice<UInt8>] = []

    init(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let count = Int(first & 0x07) + 1
        settingsFirst = first & 0x08 != 0
        let cutBytes = bytes.dropFirst().prefix(count - 1)
        let payload = bytes.dropFirst(1 + cutBytes.count)
        var cuts = cutBytes.map { payload.startIndex + Int($0) * payload.count / 256 }
        cuts.sort()
        var from = payload.startIndex
        for cut in cuts + [payload.endIndex] {
            chunks.append(payload[from..<cut])
            from = cut
        }
    }
}

/// What happened to the exchange, recorded by its promises' callbacks (which run on the embedded loop).
final class Outcome: @unchecked Sendable {
    var stream: (any Channel)?
    var streamError: (any Error)?
    var head: HTTPResponseHead?
    var headError: (any Error)?
    var completed: Bool?
    var completionError: (any Error)?

    var headSettled: Bool { head != nil || headError != nil }
    var completionSettled: Bool { completed != nil || completionError != nil }
    var failure: (any Error)? { headError ?? completionError ?? streamError }
}

/// The errors a stream may fail with.
func isTyped(_ error: any Error) -> Bool {
    error is any NIOHTTP2Error || error is any NIOHPACKError || error is ResponseLimitExceeded
        || error is ConnectionClosedError || error is ChannelError || error is HTTP2StatusGuard.InvalidStatus
}

/// Errors that say only that the stream or the connection ended.
func isClose(_ error: any Error) -> Bool {
    if error is ConnectionClosedError || error is NIOHTTP2Errors.StreamClosed || error is NIOHTTP2Errors.IOOnClosedConnection { return true }
    if let channelError = error as? ChannelError {
        return channelError == .ioOnClosedChannel || channelError == .alreadyClosed || channelError == .eof || channelError == .outputClosed
    }
    return false
}

func feed(_ bytes: ArraySlice<UInt8>, into channel: EmbeddedChannel) {
    guard channel.isActive else { return }
    var buffer = channel.allocator.buffer(capacity: bytes.count)
    buffer.writeBytes(bytes)
    _ = try? channel.writeInbound(buffer)
    channel.embeddedEventLoop.run()
    drainOutbound(channel)
}

/// One input: every property must hold.
func test(_ bytes: [UInt8]) -> CInt {
    let layout = Layout(bytes)
    let channel = EmbeddedChannel()
    let errorLog = TLSErrorLog()
    let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    do {
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        let negotiated = try HandshakeWaiter.configure(channel, http2: true, limits: limits, errorLog: errorLog)
        guard let bound = negotiated.multiplexer else { fatalError("HTTP/2 configured without a multiplexer") }
        multiplexer = bound.value
    } catch {
        fatalError("setting up the pipeline failed: \(error)")
    }
    channel.embeddedEventLoop.run()
    drainOutbound(channel)  // our preface and SETTINGS

    if layout.settingsFirst { feed(serverPreface[...], into: channel) }

    // One stream, opened as Connection.openStream opens it, and one exchange written on it.
    let outcome = Outcome()
    multiplexer.createStreamChannel { stream in
        stream.eventLoop.makeCompletedFuture {
            try stream.pipeline.syncOperations.addHandlers([HTTP2StatusGuard(), HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https), HTTPExchangeHandler()])
        }
    }.whenComplete { result in
        switch result {
        case .success(let stream): outcome.stream = stream
        case .failure(let error): outcome.streamError = error
        }
    }
    channel.embeddedEventLoop.run()
    var exchange: HTTPExchange?
    if let stream = outcome.stream {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "example.com")
        let requestHead = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: headers)
        let created = HTTPExchange(head: requestHead, body: nil, channel: stream, limits: limits)
        exchange = created
        created.responseHead.futureResult.whenComplete { result in
            switch result {
            case .success(let head): outcome.head = head
            case .failure(let error): outcome.headError = error
            }
        }
        created.completion.futureResult.whenComplete { result in
            switch result {
            case .success(let keepAlive): outcome.completed = keepAlive
            case .failure(let error): outcome.completionError = error
            }
        }
        let written = stream.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { error in
            if let channelError = error as? ChannelError, channelError == .ioOnClosedChannel {
                created.fail(ConnectionClosedError())
            }
        }
        stream.writeAndFlush(created, promise: written)
        channel.embeddedEventLoop.run()
        drainOutbound(channel)
    } else {
        require(outcome.streamError != nil, "opening a stream neither succeeded nor failed")
    }

    if !layout.settingsFirst { feed(serverPreface[...], into: channel) }
    for chunk in layout.chunks { feed(chunk, into: channel) }

    check(outcome, exchange: exchange, channel: channel, errorLog: errorLog, closedByUs: false)

    // The connection closes: nothing may stay pending.
    channel.close(promise: nil)
    channel.embeddedEventLoop.run()
    if exchange != nil {
        require(outcome.headSettled && outcome.completionSettled, "the exchange is still pending after the connection closed")
    }
    check(outcome, exchange: exchange, channel: channel, errorLog: errorLog, closedByUs: true)
    _ = try? channel.finish(acceptAlreadyClosed: true)
    return 0
}

func check(_ outcome: Outcome, exchange: HTTPExchange?, channel: EmbeddedChannel, errorLog: TLSErrorLog, closedByUs: Bool) {
    if let error = outcome.streamError {
        require(isTyped(error) || error is CancellationError, "opening the stream failed with an unexpected error: \(type(of: error)) \(error)")
    }
    if let error = outcome.headError {
        require(outcome.head == nil, "both a head and a failure")
        require(isTyped(error), "the exchange failed before a head with an unexpected error: \(type(of: error)) \(error)")
        require(outcome.completionError != nil && outcome.completed == nil, "a head failure without the exchange failing")
    }
    if let head = outcome.head {
        var listSize = 0
        for (name, value) in head.headers { listSize += name.utf8.count + value.utf8.count + 32 }
        require(listSize <= limits.maximumHeadSize, "a header list of \(listSize) bytes delivered (limit \(limits.maximumHeadSize))")
        require(head.status.code < 100 || head.status.code >= 200 || head.status == .switchingProtocols, "an interim response delivered as the head: \(head.status.code)")
        if let error = outcome.completionError {
            require(isTyped(error), "the body failed with an unexpected error: \(type(of: error)) \(error)")
        }
    } else {
        require(outcome.completed == nil, "the exchange ended without a head")
    }
    if !closedByUs && !channel.isActive {
        let closeError = outcome.failure.map(isClose) ?? false
        require(errorLog.violation != nil || closeError,
                "the connection closed with no violation logged and the exchange not failed by a close (log: \(errorLog.text); failure: \(String(describing: outcome.failure)))")
    }
}

/// Drops what the client wrote (the request, our SETTINGS and ACKs): its type does not matter here.
func drainOutbound(_ channel: EmbeddedChannel) {
    while true {
        do {
            guard try channel.readOutbound(as: IOData.self) != nil else { return }
        } catch {
            continue  // an element of another type, removed all the same
        }
    }
}

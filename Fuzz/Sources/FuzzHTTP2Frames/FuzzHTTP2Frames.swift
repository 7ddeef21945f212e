import FuzzHTTPSupport
import FuzzSupport
import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

@testable import TrustHTTP

/// The HTTP/2 client connection: ``HTTP2FloodGuard``, swift-nio-http2's handler and multiplexer with
/// the connection configuration the TrustHTTPClient sets (`HandshakeWaiter.http2Configuration`), the
/// ``ConnectionErrorRecorder`` that closes the connection on a violation, and one stream as
/// `Connection.openStream` opens it (its ``HTTPExchangeHandler`` reading and writing the frames), set
/// up by `HandshakeWaiter.configure(_:http2: true, limits:errorLog:)`.
///
/// Input: one byte — low three bits: the number of chunks minus one (1…8); bit 3: the server's
/// SETTINGS arrive before the stream is opened (else right after the request is written, as when a
/// TrustHTTPClient sends its first request at once); then one byte per further chunk placing its start;
/// then the server's frames, after a valid empty SETTINGS frame (the server's connection preface)
/// the harness sends first. The embedded event loop runs once after each chunk (a bounded number
/// of times).
///
/// Properties (small limits: header list 4 KiB, 32 fields, 3 interim responses):
/// - nothing traps, no input hangs (libFuzzer's `-timeout`), memory stays bounded (`-rss_limit_mb`);
/// - the exchange is pending, has its head (then its body is pending, ended or failed with a typed
///   error), or failed with a typed error: an HTTP/2 or HPACK error of swift-nio-http2, a
///   `ResponseLimitExceeded`, a `ConnectionClosedError`, a `ChannelError`, or one of ``HTTP2ExchangeFraming``'s
///   refusals (an invalid `:status`, a field value with a control character, frames out of order);
/// - a delivered head's header list is within `maximumHeadSize` (counted as RFC 7541 §4.1: name,
///   value and 32 per field) and is not an interim response;
/// - when the connection closed by itself, the `ConnectionErrorLog` holds a violation or the exchange
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

let limits = smallResponseLimits

/// An empty SETTINGS frame on stream 0: the server's connection preface (RFC 9113 §3.4).
let serverPreface: [UInt8] = [0, 0, 0, 0x04, 0, 0, 0, 0, 0]

/// The exchange on the stream.
final class Outcome: @unchecked Sendable {
    var exchange: ExchangeOutcome?

    var failure: (any Error)? { exchange?.headError ?? exchange?.completionError }
}

/// The errors a stream may fail with.
func isTyped(_ error: any Error) -> Bool {
    error is any NIOHTTP2Error || error is any NIOHPACKError || error is ResponseLimitExceeded
        || error is ConnectionClosedError || error is ChannelError || error is HTTP2ExchangeFraming.InvalidStatus
        || error is HTTP2ExchangeFraming.InvalidFieldValue || error is HTTP2ExchangeFraming.FrameOutOfOrder
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
    let input = ChunkedInput(bytes)
    let channel = EmbeddedChannel()
    let errorLog = ConnectionErrorLog()
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

    if input.flag { feed(serverPreface[...], into: channel) }

    // One stream, opened by Connection.openStream: made for one exchange, which it sends once active.
    let outcome = Outcome()
    let exchange = makeRequest(on: channel.eventLoop)
    outcome.exchange = ExchangeOutcome(watching: exchange)
    Connection.openStream(for: exchange, on: multiplexer, connection: channel, decompression: .disabled)
    channel.embeddedEventLoop.run()
    drainOutbound(channel)

    if !input.flag { feed(serverPreface[...], into: channel) }
    for chunk in input.chunks { feed(chunk, into: channel) }

    check(outcome, channel: channel, errorLog: errorLog, closedByUs: false)

    // The connection closes: nothing may stay pending.
    channel.close(promise: nil)
    channel.embeddedEventLoop.run()
    if let exchange = outcome.exchange {
        require(exchange.headSettled && exchange.completionSettled, "the exchange is still pending after the connection closed")
    }
    check(outcome, channel: channel, errorLog: errorLog, closedByUs: true)
    _ = try? channel.finish(acceptAlreadyClosed: true)
    return 0
}

func check(_ outcome: Outcome, channel: EmbeddedChannel, errorLog: ConnectionErrorLog, closedByUs: Bool) {
    if let exchange = outcome.exchange { check(exchange) }
    if !closedByUs && !channel.isActive {
        let closeError = outcome.failure.map(isClose) ?? false
        require(
            errorLog.violation != nil || closeError,
            "the connection closed with no violation logged and the exchange not failed by a close (log: \(errorLog.text); failure: \(String(describing: outcome.failure)))"
        )
    }
}

func check(_ exchange: ExchangeOutcome) {
    if let error = exchange.headError {
        require(exchange.head == nil, "both a head and a failure")
        require(isTyped(error), "the exchange failed before a head with an unexpected error: \(type(of: error)) \(error)")
        require(exchange.completionError != nil && exchange.completed == nil, "a head failure without the exchange failing")
    }
    if let head = exchange.head {
        var listSize = 0
        for (name, value) in head.headers { listSize += name.utf8.count + value.utf8.count + 32 }
        require(listSize <= limits.maximumHeadSize, "a header list of \(listSize) bytes delivered (limit \(limits.maximumHeadSize))")
        require(
            head.status.code < 100 || head.status.code >= 200 || head.status == .switchingProtocols,
            "an interim response delivered as the head: \(head.status.code)")
        if let error = exchange.completionError {
            require(isTyped(error), "the body failed with an unexpected error: \(type(of: error)) \(error)")
        }
    } else {
        require(exchange.completed == nil, "the exchange ended without a head")
    }
}

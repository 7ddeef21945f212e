import FuzzHTTPSupport
import FuzzSupport
import NIOCore
import NIOEmbedded
import NIOHTTP1

@testable import TrustHTTP

/// The HTTP/1.1 client pipeline's response parsing: ``ResponseHeadLimiter`` (head bounds on the raw
/// bytes), NIO's response decoder (with the decoder limits the TrustHTTPClient sets) and ``HTTPExchangeHandler``
/// (interim responses, head, body), set up by `HandshakeWaiter.configure(_:http2: false, limits:)`
/// exactly as a TrustHTTPClient sets up a connection once TLS is done.
///
/// Input: one byte — low three bits: the number of chunks minus one (1…8); bit 3: the request is
/// `HEAD` (a response to it has no body); then one byte per further chunk placing its start; then
/// the server's bytes, written into the channel chunk by chunk after the request.
///
/// Properties (small limits, so the fuzzer reaches them: head 4 KiB, field 1 KiB, 32 fields,
/// 3 interim responses):
/// - nothing traps;
/// - while the connection is open, the exchange is either pending, or its head was delivered (then
///   its body is pending, ended, or failed with a typed error), or it failed before a head with a
///   `ResponseLimitExceeded` (then the channel is closed and the limit was really exceeded) or an
///   `HTTPParserError`;
/// - once the channel is closed at the end, the exchange is no longer pending, and a failure may
///   also be `ConnectionClosedError`;
/// - a delivered head has at most `maximumHeaderFields` fields, every field line (name, `:`, value)
///   within `maximumHeaderFieldSize` and all of them within `maximumHeadSize`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    test(fuzzInput(start, count))
}

/// The entry point (SwiftPM links this target with `--defsym main=FuzzHTTP1ResponseHead_main`): libFuzzer's driver.
@_cdecl("FuzzHTTP1ResponseHead_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { data, count in test(fuzzInput(data, count)) }
}

let limits = smallResponseLimits

func isLimit(_ error: any Error) -> Bool { error is ResponseLimitExceeded }
func isParser(_ error: any Error) -> Bool { error is HTTPParserError }
func isClose(_ error: any Error) -> Bool { error is ConnectionClosedError }

/// One input: every property must hold.
func test(_ bytes: [UInt8]) -> CInt {
    let input = ChunkedInput(bytes)
    let channel = EmbeddedChannel()
    defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
    do {
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        _ = try HandshakeWaiter.configure(channel, http2: false, limits: limits)
    } catch {
        fatalError("setting up the pipeline failed: \(error)")
    }

    // The request, written as Connection.exchange writes it (bit 3: a HEAD request).
    let outcome = sendRequest(on: channel, head: input.flag)
    require(outcome.headError == nil, "writing the request failed: \(String(describing: outcome.headError))")
    drainOutbound(channel)

    // The server's bytes, chunk by chunk, while the connection is open.
    for chunk in input.chunks where channel.isActive {
        var buffer = channel.allocator.buffer(capacity: chunk.count)
        buffer.writeBytes(chunk)
        _ = try? channel.writeInbound(buffer)
        drainOutbound(channel)
    }
    check(outcome, closedByUs: false, channel: channel, input: bytes)

    // The connection closes: nothing may stay pending.
    channel.close(promise: nil)
    channel.embeddedEventLoop.run()
    require(outcome.headSettled && outcome.completionSettled, "the exchange is still pending after the connection closed")
    check(outcome, closedByUs: true, channel: channel, input: bytes)
    return 0
}

func check(_ outcome: ExchangeOutcome, closedByUs: Bool, channel: EmbeddedChannel, input: [UInt8]) {
    let allowed: (any Error) -> Bool = { isLimit($0) || isParser($0) || (closedByUs && isClose($0)) }
    if let error = outcome.headError {
        require(outcome.head == nil, "both a head and a failure")
        require(allowed(error), "the exchange failed before a head with an unexpected error: \(type(of: error)) \(error)")
        require(outcome.completionError != nil && outcome.completed == nil, "a head failure without the exchange failing")
        if let exceeded = error as? ResponseLimitExceeded {
            require(exceeded.limit.observed > exceeded.limit.limit, "a limit reported without being exceeded: \(exceeded)")
            require(!channel.isActive, "the connection stays open after a limit was exceeded: \(exceeded)")
        }
    }
    if let head = outcome.head {
        require(head.headers.count <= limits.maximumHeaderFields, "a head with \(head.headers.count) fields delivered (limit \(limits.maximumHeaderFields))")
        var total = 0
        for (name, value) in head.headers {
            let line = wireBytes(name) + 1 + wireBytes(value)
            require(line <= limits.maximumHeaderFieldSize, "a field line of \(line) bytes delivered (limit \(limits.maximumHeaderFieldSize)): \(name)")
            total += line
        }
        require(total <= limits.maximumHeadSize, "a head of at least \(total) bytes delivered (limit \(limits.maximumHeadSize))")
        require(
            head.status.code < 100 || head.status.code >= 200 || head.status == .switchingProtocols,
            "an interim response delivered as the head: \(head.status.code)")
        if let error = outcome.completionError {
            require(allowed(error), "the body failed with an unexpected error: \(type(of: error)) \(error)")
        }
    } else {
        require(outcome.completed == nil, "the exchange ended without a head")
    }
}

/// The fewest bytes `text` can have come from: NIO decodes header bytes as UTF-8, repairing each
/// invalid sequence (at least one byte) into U+FFFD, which takes three bytes in the String.
func wireBytes(_ text: String) -> Int {
    text.unicodeScalars.reduce(0) { $0 + ($1 == "\u{FFFD}" ? 1 : UTF8.width($1)) }
}

import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import Testing
import TrustTestSupport

@testable import TrustHTTP

/// The exchange handler driving its ``HTTPRequestStateMachine`` on a test channel: the HTTP/1.1 pipeline as a
/// connection has it (head limiter, NIO's codec, the handler; no TLS) and an HTTP/2 stream's, fed bytes or frames
/// as a server would send them. Time is the test loop's: timeouts run when the test moves it on.
@Suite("HTTPExchangeHandler: the request state machine on a test channel", .paced)
struct HTTPExchangeHandlerTests {
    /// The HTTP/1.1 pipeline of `HandshakeWaiter`, connected.
    private static func http1Channel(limits: ResponseLimits = ResponseLimits()) async throws -> NIOAsyncTestingChannel {
        let channel = try await NIOAsyncTestingChannel { channel in
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(ResponseHeadLimiter(limits: limits))
            try pipeline.addHandlers([
                HTTPRequestEncoder(), ByteToMessageHandler(HTTPResponseDecoder(informationalResponseStrategy: .forward)), HTTP1ExchangeHandler(),
            ])
        }
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).get()
        return channel
    }

    /// An HTTP/2 stream channel's pipeline (``Connection/configureStream(_:decompression:)``), open.
    private static func http2Stream() async throws -> NIOAsyncTestingChannel {
        let channel = try await NIOAsyncTestingChannel { try Connection.configureStream($0) }
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).get()
        return channel
    }

    /// An exchange bound to `channel`, written on it.
    private static func send(
        _ method: HTTPMethod = .GET, body: ExchangeBody = .none, headers: HTTPHeaders = ["host": "a.test"], continueTimeout: Duration? = nil,
        readTimeout: Duration? = nil, limits: ResponseLimits = ResponseLimits(), on channel: NIOAsyncTestingChannel
    ) async -> HTTPExchange {
        let head = HTTPRequestHead(version: .http1_1, method: method, uri: "/", headers: headers)
        let exchange = HTTPExchange(
            head: head, body: body, continueTimeout: continueTimeout, channel: channel, readTimeout: readTimeout, limits: limits)
        exchange.send(on: channel)
        await channel.testingEventLoop.run()
        return exchange
    }

    /// The bytes written so far, as text.
    private static func written(_ channel: NIOAsyncTestingChannel) async throws -> String {
        var text = ""
        while let data = try await channel.readOutbound(as: IOData.self) {
            if case .byteBuffer(let buffer) = data { text += String(buffer: buffer) }
        }
        return text
    }

    private static func receive(_ text: String, on channel: NIOAsyncTestingChannel) async throws {
        try await channel.writeInbound(ByteBuffer(string: text))
    }

    /// The whole body, or the error that ended it with the bytes before it.
    private static func body(of exchange: HTTPExchange) async -> (String, (any Error)?) {
        var bytes: [UInt8] = []
        do {
            for try await piece in exchange.bodyStream { bytes += piece.joined.readableBytesView }
            return (String(decoding: bytes, as: UTF8.self), nil)
        } catch {
            return (String(decoding: bytes, as: UTF8.self), error)
        }
    }

    // MARK: HTTP/1.1

    @Test func aResponseFinishesTheExchangeAndKeepsTheConnection() async throws {
        let channel = try await Self.http1Channel()
        let exchange = await Self.send(on: channel)
        #expect(try await Self.written(channel).hasPrefix("GET / HTTP/1.1\r\n"))
        try await Self.receive("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello", on: channel)
        #expect(try await exchange.responseHeadFuture.get().status == .ok)
        let (body, error) = await Self.body(of: exchange)
        #expect(body == "hello" && error == nil)
        #expect(try await exchange.ended.get())
        #expect(channel.isActive)
        // The next request goes on the same connection.
        let next = await Self.send(on: channel)
        try await Self.receive("HTTP/1.1 204 No Content\r\n\r\n", on: channel)
        #expect(try await next.ended.get())
    }

    @Test func aBodyHeldForContinueIsSentOnContinue() async throws {
        let channel = try await Self.http1Channel()
        let headers: HTTPHeaders = ["host": "a.test", "content-length": "3", "expect": "100-continue"]
        let exchange = await Self.send(.POST, body: .bytes(ByteBuffer(string: "abc")), headers: headers, continueTimeout: .seconds(30), on: channel)
        #expect(try await !Self.written(channel).hasSuffix("abc"))
        try await Self.receive("HTTP/1.1 100 Continue\r\n\r\n", on: channel)
        #expect(try await Self.written(channel) == "abc")
        try await Self.receive("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", on: channel)
        #expect(try await exchange.ended.get())
    }

    @Test func aBodyHeldForContinueIsSentWhenTheWaitRunsOut() async throws {
        let channel = try await Self.http1Channel()
        let headers: HTTPHeaders = ["host": "a.test", "content-length": "3", "expect": "100-continue"]
        let exchange = await Self.send(.POST, body: .bytes(ByteBuffer(string: "abc")), headers: headers, continueTimeout: .seconds(30), on: channel)
        _ = try await Self.written(channel)
        await channel.testingEventLoop.advanceTime(by: .seconds(29))
        #expect(try await Self.written(channel) == "")
        await channel.testingEventLoop.advanceTime(by: .seconds(1))
        #expect(try await Self.written(channel) == "abc")
        try await Self.receive("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", on: channel)
        #expect(try await exchange.ended.get())
    }

    @Test func aFinalAnswerBeforeContinueAbandonsTheBody() async throws {
        let channel = try await Self.http1Channel()
        let headers: HTTPHeaders = ["host": "a.test", "content-length": "3", "expect": "100-continue"]
        let exchange = await Self.send(.POST, body: .bytes(ByteBuffer(string: "abc")), headers: headers, continueTimeout: .seconds(30), on: channel)
        _ = try await Self.written(channel)
        try await Self.receive("HTTP/1.1 417 Expectation Failed\r\ncontent-length: 0\r\n\r\n", on: channel)
        #expect(try await exchange.responseHeadFuture.get().status == .expectationFailed)
        // The request was not sent in full: the connection is not reused, and the body never goes.
        #expect(try await !exchange.ended.get())
        await channel.testingEventLoop.advanceTime(by: .seconds(60))
        #expect(try await Self.written(channel) == "")
    }

    @Test func aStreamedBodyIsWrittenAndTheResponseKeepsTheConnection() async throws {
        let channel = try await Self.http1Channel()
        let body = ExchangeBody.stream(
            { write in
                try await write(ByteBuffer(string: "abc"))
                try await write(ByteBuffer(string: "def"))
            }, length: 6)
        let exchange = await Self.send(.PUT, body: body, headers: ["host": "a.test", "content-length": "6"], on: channel)
        var text = ""
        while !text.hasSuffix("abcdef") {
            if case .byteBuffer(let buffer) = try await channel.waitForOutboundWrite(as: IOData.self) { text += String(buffer: buffer) }
        }
        try await Self.receive("HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n", on: channel)
        #expect(try await exchange.ended.get())
        #expect(exchange.upload.sent == 6)
    }

    @Test func aStreamedBodyThatFailsFailsTheExchangeAndClosesTheConnection() async throws {
        let channel = try await Self.http1Channel()
        struct SourceFailed: Error {}
        let body = ExchangeBody.stream({ _ in throw SourceFailed() }, length: nil)
        let exchange = await Self.send(.PUT, body: body, headers: ["host": "a.test", "transfer-encoding": "chunked"], on: channel)
        let error = try await failure(of: exchange.ended)
        #expect((error as? TrustHTTPClientError)?.code == .requestBodyStreamExhausted)
        try await channel.closeFuture.get()
    }

    @Test func theReadTimeoutFailsAnIdleExchangeAndBytesPushItBack() async throws {
        let channel = try await Self.http1Channel()
        let exchange = await Self.send(readTimeout: .seconds(10), on: channel)
        await channel.testingEventLoop.advanceTime(by: .seconds(6))
        try await Self.receive("HTTP/1.1 200 OK\r\n", on: channel)  // part of a head: activity
        await channel.testingEventLoop.advanceTime(by: .seconds(6))
        #expect(channel.isActive)
        await channel.testingEventLoop.advanceTime(by: .seconds(4))
        let error = try await failure(of: exchange.ended)
        #expect((error as? TrustHTTPClientError)?.code == .timedOut)
        try await channel.closeFuture.get()
    }

    @Test func aServerClosingMidBodyFailsTheExchangeWithWhatArrived() async throws {
        let channel = try await Self.http1Channel()
        let exchange = await Self.send(on: channel)
        try await Self.receive("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabcd", on: channel)
        try await channel.close()
        let (body, error) = await Self.body(of: exchange)
        #expect(body == "abcd")
        // NIO's decoder may see the short body first (an HTTP/1.1 body of declared length cut short, RFC 9112 §8).
        #expect(error is ConnectionClosedError || error is HTTPParserError)
    }

    @Test func anOversizedHeadIsRefused() async throws {
        var limits = ResponseLimits()
        limits.maximumHeadSize = 256
        let channel = try await Self.http1Channel(limits: limits)
        let exchange = await Self.send(limits: limits, on: channel)
        try? await Self.receive("HTTP/1.1 200 OK\r\nx-filler: \(String(repeating: "a", count: 400))\r\n\r\n", on: channel)
        let error = try await failure(of: exchange.responseHeadFuture)
        #expect((error as? ResponseLimitExceeded)?.limit.kind == .headSize)
        try await channel.closeFuture.get()
    }

    @Test func aBadStatusLineIsRefused() async throws {
        let channel = try await Self.http1Channel()
        let exchange = await Self.send(on: channel)
        try? await Self.receive("HTTP/1.1 2000 Nope\r\ncontent-length: 0\r\n\r\n", on: channel)
        #expect(try await failure(of: exchange.responseHeadFuture) is HTTPParserError)
        try await channel.closeFuture.get()
    }

    @Test func aFloodOfInterimResponsesIsRefused() async throws {
        var limits = ResponseLimits()
        limits.maximumInformationalResponses = 2
        let channel = try await Self.http1Channel(limits: limits)
        let exchange = await Self.send(limits: limits, on: channel)
        try? await Self.receive(String(repeating: "HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n", count: 3), on: channel)
        let error = try await failure(of: exchange.responseHeadFuture)
        #expect((error as? ResponseLimitExceeded)?.limit.kind == .informationalResponses)
        try await channel.closeFuture.get()
    }

    @Test func bodyBytesAreHeldForTheReadCycleUpToTheChunkLimit() async throws {
        // The handler alone, fed response parts as NIO's decoder hands them over.
        let channel = try await NIOAsyncTestingChannel { try $0.pipeline.syncOperations.addHandler(HTTP1ExchangeHandler()) }
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).get()
        let exchange = await Self.send(on: channel)
        let half = HTTP1ExchangeHandler.bodyChunkLimit / 2 + 1
        let parts: [HTTPClientResponsePart] = [
            .head(HTTPResponseHead(version: .http1_1, status: .ok)), .body(ByteBuffer(repeating: 1, count: half)),
            .body(ByteBuffer(repeating: 2, count: half)), .body(ByteBuffer(repeating: 3, count: 10)),
        ]
        try await channel.testingEventLoop.executeInContext {
            for part in parts { channel.pipeline.syncOperations.fireChannelRead(NIOAny(part)) }  // one read cycle
            channel.pipeline.syncOperations.fireChannelReadComplete()
            channel.pipeline.syncOperations.fireChannelRead(NIOAny(HTTPClientResponsePart.end(nil)))
        }
        var pieces: [Int] = []
        for try await piece in exchange.bodyStream { pieces.append(piece.byteCount) }
        // A piece once the limit is reached, the rest when the read cycle ends.
        #expect(pieces == [2 * half, 10])
        #expect(try await exchange.ended.get())
    }

    @Test func aWriteOnAClosedChannelFailsTheExchange() async throws {
        let channel = try await Self.http1Channel()
        let first = await Self.send(on: channel)
        // A second request while the first is under way is refused.
        let second = await Self.send(on: channel)
        #expect(try await failure(of: second.ended) is ConnectionClosedError)
        try await channel.close()
        #expect(try await failure(of: first.ended) is ConnectionClosedError)
    }

    @Test func anExchangeSentOnAChannelThatHasClosedFailsAtOnceAndWritesNothing() async throws {
        let channel = try await Self.http1Channel()
        try await channel.close()
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: ["host": "a.test"])
        let exchange = HTTPExchange(head: head, body: .none, channel: channel)
        exchange.send(on: channel)
        #expect(try await failure(of: exchange.responseHeadFuture) is ConnectionClosedError)
        #expect(try await failure(of: exchange.ended) is ConnectionClosedError)
        #expect(try await channel.readOutbound(as: IOData.self) == nil)
    }

    // MARK: HTTP/2 streams

    private static func headers(_ status: String, endStream: Bool = false) -> HTTP2Frame.FramePayload {
        .headers(.init(headers: HPACKHeaders([(":status", status)]), endStream: endStream))
    }

    @Test func anHTTP2ResponseFinishesTheExchange() async throws {
        let stream = try await Self.http2Stream()
        let exchange = await Self.send(on: stream)
        try await stream.writeInbound(Self.headers("200"))
        try await stream.writeInbound(HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(ByteBuffer(string: "hi")), endStream: true)))
        let (body, error) = await Self.body(of: exchange)
        #expect(body == "hi" && error == nil)
        // It ends normally (an HTTP/2 head is never "keep-alive": the stream, not the connection, ends).
        _ = try await exchange.ended.get()
    }

    @Test func anHTTP2ResetFailsTheExchangeAndClosesTheStream() async throws {
        let stream = try await Self.http2Stream()
        let exchange = await Self.send(on: stream)
        try await stream.writeInbound(Self.headers("200"))
        let reset = NIOHTTP2Errors.streamClosed(streamID: 1, errorCode: .refusedStream)
        stream.pipeline.fireErrorCaught(reset)
        let (_, error) = await Self.body(of: exchange)
        #expect(error is NIOHTTP2Errors.StreamClosed)
        try await stream.closeFuture.get()
    }

    @Test func anHTTP2BadStatusIsRefused() async throws {
        let stream = try await Self.http2Stream()
        let exchange = await Self.send(on: stream)
        _ = try? await stream.writeInbound(Self.headers("2x"))
        #expect(try await failure(of: exchange.responseHeadFuture) is HTTP2ExchangeFraming.InvalidStatus)
        try await stream.closeFuture.get()
    }

    @Test func anHTTP2EmptyStatusNamedInCapitalsIsRefused() async throws {
        let stream = try await Self.http2Stream()
        let exchange = await Self.send(on: stream)
        _ = try? await stream.writeInbound(HTTP2Frame.FramePayload.headers(.init(headers: HPACKHeaders([(":STATUS", "")]))))
        #expect(try await failure(of: exchange.responseHeadFuture) is HTTP2ExchangeFraming.InvalidStatus)
        try await stream.closeFuture.get()
    }

    @Test func anHTTP2EmptySecondStatusIsRefused() async throws {
        let stream = try await Self.http2Stream()
        let exchange = await Self.send(on: stream)
        let headers = HPACKHeaders([(":status", "200"), (":status", "")])
        _ = try? await stream.writeInbound(HTTP2Frame.FramePayload.headers(.init(headers: headers)))
        #expect(try await failure(of: exchange.responseHeadFuture) is HTTP2ExchangeFraming.InvalidStatus)
        try await stream.closeFuture.get()
    }

    @Test func anHTTP2FloodOfInterimResponsesIsRefused() async throws {
        var limits = ResponseLimits()
        limits.maximumInformationalResponses = 2
        let stream = try await Self.http2Stream()
        let exchange = await Self.send(limits: limits, on: stream)
        for _ in 0..<3 { _ = try? await stream.writeInbound(Self.headers("103")) }
        let error = try await failure(of: exchange.responseHeadFuture)
        #expect((error as? ResponseLimitExceeded)?.limit == ResponseLimit(.informationalResponses, observed: 3, limit: 2))
        try await stream.closeFuture.get()
    }

    @Test func anHTTP2AnswerToHEADWithoutStreamEndCompletesAtTheReadCycleEnd() async throws {
        let stream = try await Self.http2Stream()
        let exchange = await Self.send(.HEAD, on: stream)
        try await stream.writeInbound(Self.headers("200"))
        // Content after a HEAD's answer is dropped; the response completes, and the stream is reset.
        #expect(try await !exchange.ended.get())
        try await stream.closeFuture.get()
    }

    @Test func anHTTP2AnswerBeforeAHeldBodyResetsTheStream() async throws {
        let stream = try await Self.http2Stream()
        let headers: HTTPHeaders = ["host": "a.test", "content-length": "3", "expect": "100-continue"]
        let exchange = await Self.send(.POST, body: .bytes(ByteBuffer(string: "abc")), headers: headers, continueTimeout: .seconds(30), on: stream)
        try await stream.writeInbound(Self.headers("417", endStream: true))
        // The request was not sent in full (RFC 9113 §8.1): the response completes and the stream is reset.
        #expect(try await !exchange.ended.get())
        try await stream.closeFuture.get()
    }

    @Test func anHTTP2RequestTheFramingRefusesFailsItsExchangeAndWritesNothing() async throws {
        let stream = try await Self.http2Stream()
        let exchange = await Self.send(headers: [:], on: stream)
        #expect(try await failure(of: exchange.responseHeadFuture) is NIOHTTP2Errors.MissingHostHeader)
        try await stream.closeFuture.get()
        #expect(try await stream.readOutbound(as: HTTP2Frame.FramePayload.self) == nil)
    }

    /// A stream made for an exchange, as `Connection.openStream` makes it, not yet active; and its exchange.
    private static func streamMadeForAnExchange() async throws -> (NIOAsyncTestingChannel, HTTPExchange) {
        let loop = NIOAsyncTestingEventLoop()
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: ["host": "a.test"])
        let exchange = HTTPExchange(head: head, body: .none, eventLoop: loop)
        let stream = try await NIOAsyncTestingChannel(loop: loop) { try Connection.configureStream($0, sending: exchange) }
        return (stream, exchange)
    }

    @Test func aStreamMadeForAnExchangeSendsItOnceActive() async throws {
        let (stream, exchange) = try await Self.streamMadeForAnExchange()
        #expect(try await stream.readOutbound(as: HTTP2Frame.FramePayload.self) == nil)
        try await stream.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).get()
        guard case .headers(let request) = try await stream.readOutbound(as: HTTP2Frame.FramePayload.self) else {
            Issue.record("no HEADERS frame was written once the stream was active")
            return
        }
        #expect(request.headers.first(name: ":path") == "/" && request.headers.first(name: ":authority") == "a.test")
        try await stream.writeInbound(Self.headers("204", endStream: true))
        #expect(try await exchange.responseHeadFuture.get().status == .noContent)
        _ = try await exchange.ended.get()
    }

    @Test func aStreamThatClosesBeforeItIsActiveFailsItsExchange() async throws {
        let (stream, exchange) = try await Self.streamMadeForAnExchange()
        try await stream.close()
        let error = try await failure(of: exchange.responseHeadFuture)
        #expect((error as? ConnectionClosedError)?.isHTTP2Stream == true)
    }

    @Test func anExchangeThatEndedBeforeItsStreamWasActiveClosesTheStreamUnwritten() async throws {
        let (stream, exchange) = try await Self.streamMadeForAnExchange()
        exchange.abort(CancellationError())
        try await stream.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).get()
        try await stream.closeFuture.get()
        #expect(try await stream.readOutbound(as: HTTP2Frame.FramePayload.self) == nil)
        #expect(try await failure(of: exchange.responseHeadFuture) is CancellationError)
    }

    @Test func aStreamHandlerDroppedUnsentFailsItsExchange() async throws {
        let loop = NIOAsyncTestingEventLoop()
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: ["host": "a.test"])
        let exchange = HTTPExchange(head: head, body: .none, eventLoop: loop)
        do {
            _ = HTTP2ExchangeHandler(isHTTP2Stream: true, sendingWhenActive: exchange)
        }
        let error = try await failure(of: exchange.responseHeadFuture)
        #expect((error as? ConnectionClosedError)?.isHTTP2Stream == true)
    }

    /// swift-nio-http2 makes a stream on the loop's next turn; a connection that closes before then leaves a stream that
    /// is never activated (or, on a socket, is never set up). The exchange must hear of it then, not at its deadline.
    @Test func anExchangeWhoseConnectionClosesBeforeItsStreamIsMadeFailsAtOnce() throws {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        let negotiated = try HandshakeWaiter.configure(channel, http2: true, limits: ResponseLimits())
        let multiplexer = try #require(negotiated.multiplexer).value
        channel.embeddedEventLoop.run()
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/", headers: ["host": "a.test"])
        let exchange = HTTPExchange(head: head, body: .none, eventLoop: channel.eventLoop)
        let answer = NIOLockedValueBox<Result<HTTPResponseHead, any Error>?>(nil)
        exchange.responseHeadFuture.whenComplete { result in answer.withLockedValue { $0 = result } }
        Connection.openStream(for: exchange, on: multiplexer, connection: channel, decompression: .disabled)
        channel.close(promise: nil)
        channel.embeddedEventLoop.run()
        guard case .failure(let error)? = answer.withLockedValue({ $0 }) else {
            Issue.record("the exchange has no failure after its connection closed")
            return
        }
        #expect((error as? ConnectionClosedError)?.isHTTP2Stream == true, "\(error)")
    }

    @Test func anHTTP2StreamClosingEarlyFailsTheExchange() async throws {
        let stream = try await Self.http2Stream()
        let exchange = await Self.send(on: stream)
        try await stream.writeInbound(Self.headers("200"))
        try await stream.close()
        let error = try await failure(of: exchange.ended)
        #expect((error as? ConnectionClosedError)?.isHTTP2Stream == true)
    }
}

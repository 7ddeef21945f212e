import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import Testing

@testable import TrustHTTP

/// ``HTTP2ExchangeFraming`` without a channel: the request's frames (RFC 9113 §8.3.1, §8.2.2) and the response's
/// parts (§8.1), every refusal included.
@Suite("HTTP2ExchangeFraming: one exchange's frames")
struct HTTP2ExchangeFramingTests {
    private static func head(_ headers: HTTPHeaders = ["Host": "a.test"], method: HTTPMethod = .GET, uri: String = "/p?q=1") -> HTTPRequestHead {
        HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: headers)
    }

    private static func fields(_ frame: HTTP2Frame.FramePayload?) -> [String] {
        guard case .headers(let headers) = frame else { return [] }
        return headers.headers.map { "\($0.name): \($0.value)" }
    }

    private static func endsStream(_ frame: HTTP2Frame.FramePayload?) -> Bool {
        switch frame {
        case .headers(let headers): headers.endStream
        case .data(let data): data.endStream
        default: false
        }
    }

    private static func responseHeaders(_ fields: [(String, String)], endStream: Bool = false) -> HTTP2Frame.FramePayload {
        .headers(.init(headers: HPACKHeaders(fields), endStream: endStream))
    }

    private static func data(_ text: String, endStream: Bool = false) -> HTTP2Frame.FramePayload {
        .data(.init(data: .byteBuffer(ByteBuffer(string: text)), endStream: endStream))
    }

    // MARK: The request

    @Test func theRequestHeadLeadsWithItsPseudoHeaderFieldsAndDropsConnectionFields() throws {
        let headers: HTTPHeaders = [
            "Host": "a.test:8443", "User-Agent": "t", "Connection": "keep-alive, X-Hop", "keep-alive": "5", "x-hop": "1",
            "Transfer-Encoding": "chunked", "Upgrade": "h2c", "proxy-connection": "x", "X-Kept": "Yes",
        ]
        let fields = try HTTP2ExchangeFraming.requestFields(Self.head(headers, method: .POST))
        #expect(
            fields.map { "\($0.name): \($0.value)" } == [
                ":method: POST", ":scheme: https", ":authority: a.test:8443", ":path: /p?q=1", "user-agent: t", "x-kept: Yes",
            ])
    }

    @Test func aRequestWithoutOneHostIsRefused() {
        #expect(throws: NIOHTTP2Errors.MissingHostHeader.self) { try HTTP2ExchangeFraming.requestFields(Self.head([:])) }
        #expect(throws: NIOHTTP2Errors.DuplicateHostHeader.self) {
            try HTTP2ExchangeFraming.requestFields(Self.head(["host": "a.test", "Host": "b.test"]))
        }
    }

    @Test func aRequestWithoutBodyIsOneHeadersFrameThatEndsTheStream() throws {
        var framing = HTTP2ExchangeFraming()
        let (held, none) = try framing.write(.head(Self.head()), promise: nil)
        #expect(held == nil && none == nil)
        let (last, after) = try framing.write(.end(nil), promise: nil)
        #expect(Self.fields(last?.message).first == ":method: GET" && Self.endsStream(last?.message) && after == nil)
        #expect(framing.flush() == nil)
    }

    @Test func theBodyCarriesTheEndOnItsLastFrame() throws {
        var framing = HTTP2ExchangeFraming()
        _ = try framing.write(.head(Self.head()), promise: nil)
        let (headers, _) = try framing.write(.body(.byteBuffer(ByteBuffer(string: "ab"))), promise: nil)
        #expect(Self.fields(headers?.message).count == 4 && !Self.endsStream(headers?.message))
        let (last, _) = try framing.write(.end(nil), promise: nil)
        guard case .data(let data) = last?.message, case .byteBuffer(let bytes) = data.data else {
            Issue.record("the last frame is not the body's DATA frame")
            return
        }
        #expect(String(buffer: bytes) == "ab" && data.endStream)
    }

    @Test func anEndAfterAFlushGoesOnAnEmptyDataFrame() throws {
        var framing = HTTP2ExchangeFraming()
        _ = try framing.write(.head(Self.head()), promise: nil)
        let flushed = framing.flush()
        #expect(Self.fields(flushed?.message).count == 4 && !Self.endsStream(flushed?.message))
        let (end, _) = try framing.write(.end(nil), promise: nil)
        guard case .data(let data) = end?.message, case .byteBuffer(let bytes) = data.data else {
            Issue.record("the end is not a DATA frame")
            return
        }
        #expect(bytes.readableBytes == 0 && data.endStream)
    }

    @Test func trailersEndTheRequestWithoutConnectionFields() throws {
        var framing = HTTP2ExchangeFraming()
        _ = try framing.write(.head(Self.head()), promise: nil)
        let (headers, trailers) = try framing.write(.end(["X-Sum": "1", "connection": "close"]), promise: nil)
        #expect(!Self.endsStream(headers?.message))
        #expect(Self.fields(trailers?.message) == ["x-sum: 1"] && Self.endsStream(trailers?.message))
    }

    @Test func theEndsPromiseCompletesWithTheFrameItRidesOn() throws {
        let loop = EmbeddedEventLoop()
        let headPromise = loop.makePromise(of: Void.self)
        let endPromise = loop.makePromise(of: Void.self)
        var framing = HTTP2ExchangeFraming()
        _ = try framing.write(.head(Self.head()), promise: headPromise)
        let (last, _) = try framing.write(.end(nil), promise: endPromise)
        let ended = NIOLockedValueBox(false)
        endPromise.futureResult.whenSuccess { ended.withLockedValue { $0 = true } }
        last?.promise?.succeed()
        #expect(ended.withLockedValue { $0 })
    }

    // MARK: The response

    @Test func interimHeadsThenTheFinalOneThenBodyAndEnd() throws {
        var framing = HTTP2ExchangeFraming()
        guard case (.head(let interim)?, nil) = try framing.read(Self.responseHeaders([(":status", "103"), ("link", "</a>")])) else {
            Issue.record("no interim head")
            return
        }
        #expect(interim.status.code == 103 && interim.headers["link"] == ["</a>"])
        guard case (.head(let final)?, nil) = try framing.read(Self.responseHeaders([(":status", "200"), ("content-type", "text/plain")])) else {
            Issue.record("no final head")
            return
        }
        // The head is the server's: no :status among its fields, and no framing field added.
        #expect(final.version == .http2 && final.status == .ok && final.headers.map(\.name) == ["content-type"])
        guard case (.body(let bytes)?, .end(nil)?) = try framing.read(Self.data("hi", endStream: true)) else {
            Issue.record("no body and end")
            return
        }
        #expect(String(buffer: bytes) == "hi")
        #expect(throws: HTTP2ExchangeFraming.FrameOutOfOrder.self) { try framing.read(Self.data("more")) }
    }

    @Test func aHeadThatEndsTheStreamIsTheWholeResponse() throws {
        var framing = HTTP2ExchangeFraming()
        guard case (.head(let head)?, .end(nil)?) = try framing.read(Self.responseHeaders([(":status", "204")], endStream: true)) else {
            Issue.record("no head and end")
            return
        }
        #expect(head.status == .noContent)
        #expect(throws: HTTP2ExchangeFraming.FrameOutOfOrder.self) { try framing.read(Self.responseHeaders([(":status", "200")])) }
    }

    @Test func anEmptyLastDataFrameIsTheEndAloneAndTrailersAreTheEnd() throws {
        var framing = HTTP2ExchangeFraming()
        _ = try framing.read(Self.responseHeaders([(":status", "200")]))
        guard case (.end(nil)?, nil) = try framing.read(Self.data("", endStream: true)) else {
            Issue.record("an empty last DATA frame is not the end")
            return
        }
        var withTrailers = HTTP2ExchangeFraming()
        _ = try withTrailers.read(Self.responseHeaders([(":status", "200")]))
        guard case (.end(let trailers?)?, nil) = try withTrailers.read(Self.responseHeaders([("x-sum", "1")], endStream: true)) else {
            Issue.record("the trailers are not the end")
            return
        }
        #expect(trailers["x-sum"] == ["1"])
    }

    @Test func framesWithoutAPartInAResponseCarryNone() throws {
        var framing = HTTP2ExchangeFraming()
        guard case (nil, nil) = try framing.read(.windowUpdate(windowSizeIncrement: 10)) else {
            Issue.record("WINDOW_UPDATE carried a part")
            return
        }
    }

    @Test func dataBeforeTheFinalHeadIsRefused() throws {
        var framing = HTTP2ExchangeFraming()
        #expect(throws: HTTP2ExchangeFraming.FrameOutOfOrder.self) { try framing.read(Self.data("x")) }
        var afterInterim = HTTP2ExchangeFraming()
        _ = try afterInterim.read(Self.responseHeaders([(":status", "100")]))
        #expect(throws: HTTP2ExchangeFraming.FrameOutOfOrder.self) { try afterInterim.read(Self.data("x")) }
    }

    @Test(arguments: ["", "2", "20x", "2000", "099", "101", " 200"])
    func aStatusThatIsNotAValidHTTP2StatusIsRefused(_ status: String) {
        var framing = HTTP2ExchangeFraming()
        #expect(throws: HTTP2ExchangeFraming.InvalidStatus.self) { try framing.read(Self.responseHeaders([(":status", status)])) }
    }

    @Test func anInterimHeadThatEndsTheStreamIsRefused() {
        var framing = HTTP2ExchangeFraming()
        #expect(throws: HTTP2ExchangeFraming.InvalidStatus.self) { try framing.read(Self.responseHeaders([(":status", "100")], endStream: true)) }
    }

    @Test func aHeadWithoutOneStatusIsRefused() {
        var none = HTTP2ExchangeFraming()
        #expect(throws: NIOHTTP2Errors.MissingPseudoHeader.self) { try none.read(Self.responseHeaders([("x", "y")])) }
        var two = HTTP2ExchangeFraming()
        #expect(throws: NIOHTTP2Errors.DuplicatePseudoHeader.self) { try two.read(Self.responseHeaders([(":status", "200"), (":status", "204")])) }
    }

    @Test(arguments: ["\u{1B}[31m", "a\u{07}", "\u{7F}", "a\rb"])
    func aControlCharacterInAHeadOrTrailersIsRefusedByName(_ value: String) throws {
        var framing = HTTP2ExchangeFraming()
        do {
            _ = try framing.read(Self.responseHeaders([(":status", "200"), ("x-bad", value)]))
            Issue.record("accepted")
        } catch let error as HTTP2ExchangeFraming.InvalidFieldValue {
            #expect(error.name == "x-bad" && !error.description.contains(value))
        }
        var trailers = HTTP2ExchangeFraming()
        _ = try trailers.read(Self.responseHeaders([(":status", "200")]))
        #expect(throws: HTTP2ExchangeFraming.InvalidFieldValue.self) { try trailers.read(Self.responseHeaders([("x-bad", value)], endStream: true)) }
    }

    @Test func htabSpaceAndObsTextPass() throws {
        var framing = HTTP2ExchangeFraming()
        guard case (.head(let head)?, _) = try framing.read(Self.responseHeaders([(":status", "200"), ("x-ok", "a\tb c\u{E9}")])) else {
            Issue.record("refused")
            return
        }
        #expect(head.headers["x-ok"] == ["a\tb c\u{E9}"])
    }
}

import NIOCore
import NIOHTTP1
import Testing

@testable import TrustHTTP

/// Every transition of the request's state machine, without a channel: the request is a description, time is given
/// with the events.
@Suite("HTTPRequestStateMachine: every transition without a channel")
struct HTTPRequestStateMachineTests {
    typealias Machine = HTTPRequestStateMachine

    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    static func request(
        _ body: Machine.Body = .none, head: Bool = false, continueTimeout: TimeAmount? = nil, readTimeout: TimeAmount? = nil, informational: Int = 3
    ) -> Machine.Request {
        Machine.Request(isHEAD: head, body: body, continueTimeout: continueTimeout, readTimeout: readTimeout, maximumInformationalResponses: informational)
    }

    static func head(_ status: HTTPResponseStatus, keepAlive: Bool = true) -> HTTPResponseHead {
        var head = HTTPResponseHead(version: .http1_1, status: status)
        if !keepAlive { head.headers.add(name: "connection", value: "close") }
        return head
    }

    static func bytes(_ count: Int) -> ByteBuffer { ByteBuffer(repeating: 7, count: count) }

    /// Starts `request` and returns its ID (recording an issue if it was refused).
    static func started(_ machine: inout Machine, _ request: Machine.Request = request(), sending: Machine.Sending? = nil) -> Machine.RequestID {
        let action = machine.start(request, channelIsActive: true, now: start)
        guard case .start(let id, let how, let readTimeout) = action else {
            Issue.record("expected .start, got \(action)")
            return Machine.RequestID(value: 0)
        }
        if let sending { #expect(how == sending) }
        #expect(readTimeout == request.readTimeout)
        return id
    }

    // MARK: Starting

    @Test func startWithoutBodyWritesTheWholeRequest() {
        var machine = Machine(isHTTP2Stream: false)
        _ = Self.started(&machine, Self.request(.none, readTimeout: .seconds(5)), sending: .whole)
        #expect(machine.current?.sending == .complete)
        #expect(machine.isRequestComplete)
    }

    @Test func startWithBytesWritesTheWholeRequest() {
        var machine = Machine(isHTTP2Stream: false)
        _ = Self.started(&machine, Self.request(.bytes), sending: .whole)
        #expect(machine.current?.sending == .complete)
    }

    @Test func startWithAStreamStartsItsTask() {
        var machine = Machine(isHTTP2Stream: false)
        _ = Self.started(&machine, Self.request(.stream(length: 10)), sending: .headThenStream)
        #expect(machine.current?.sending == .streaming(written: 0))
        #expect(!machine.isRequestComplete)
    }

    @Test func startWithExpectContinueHoldsTheBody() {
        var machine = Machine(isHTTP2Stream: false)
        _ = Self.started(&machine, Self.request(.bytes, continueTimeout: .seconds(1)), sending: .headAwaitingContinue(.seconds(1)))
        #expect(machine.current?.sending == .waitingForContinue)
        #expect(!machine.isRequestComplete)
        // Without a body there is nothing to hold back.
        var other = Machine(isHTTP2Stream: false)
        _ = Self.started(&other, Self.request(.none, continueTimeout: .seconds(1)), sending: .whole)
    }

    @Test func startWhileBusyOrClosedIsRefused() {
        var machine = Machine(isHTTP2Stream: false)
        let action = machine.start(Self.request(), channelIsActive: false, now: Self.start)
        #expect(action == .refuse)
        let first = Self.started(&machine)
        let action2 = machine.start(Self.request(), channelIsActive: true, now: Self.start)
        #expect(action2 == .refuse)
        #expect(machine.current?.id == first)
    }

    @Test func eachRequestGetsANewID() {
        var machine = Machine(isHTTP2Stream: false)
        let first = Self.started(&machine)
        _ = machine.receivedHead(Self.head(.ok), now: Self.start)
        _ = machine.receivedEnd()
        let second = Self.started(&machine)
        #expect(first != second)
        // A late event of the first request changes nothing of the second.
        let action = machine.readTimerFired(first, now: Self.start + .seconds(60), readsHeld: false)
        #expect(action == .none)
        #expect(machine.current?.id == second)
    }

    // MARK: 100-continue

    @Test func continueReceivedSendsTheHeldBody() {
        var machine = Machine(isHTTP2Stream: false)
        _ = Self.started(&machine, Self.request(.bytes, continueTimeout: .seconds(1)))
        let action = machine.receivedHead(Self.head(.continue), now: Self.start)
        #expect(action == .sendBody(.bytesAndEnd))
        #expect(machine.current?.sending == .complete)
        #expect(machine.current?.informational == 1)
        // A second 100 changes nothing.
        let action2 = machine.receivedHead(Self.head(.continue), now: Self.start)
        #expect(action2 == .none)
    }

    @Test func continueReceivedStartsAHeldStream() {
        var machine = Machine(isHTTP2Stream: false)
        _ = Self.started(&machine, Self.request(.stream(length: nil), continueTimeout: .seconds(1)))
        let action = machine.receivedHead(Self.head(.continue), now: Self.start)
        #expect(action == .sendBody(.stream))
        #expect(machine.current?.sending == .streaming(written: 0))
    }

    @Test func continueTimedOutSendsTheBodyAnyway() {
        var machine = Machine(isHTTP2Stream: false)
        let id = Self.started(&machine, Self.request(.bytes, continueTimeout: .seconds(1)))
        let action = machine.continueTimedOut(id)
        #expect(action == .bytesAndEnd)
        #expect(machine.current?.sending == .complete)
        // Once sent, a late timer does nothing.
        let action2 = machine.continueTimedOut(id)
        #expect(action2 == nil)
    }

    @Test func continueTimedOutOfAnEndedRequestDoesNothing() {
        var machine = Machine(isHTTP2Stream: false)
        let id = Self.started(&machine, Self.request(.bytes, continueTimeout: .seconds(1)))
        _ = machine.channelInactive()
        let action = machine.continueTimedOut(id)
        #expect(action == nil)
    }

    @Test func finalHeadBeforeContinueAbandonsTheBody() {
        // A 417 (or 401, 413) before the body: the body is not sent, and the connection is not reused.
        var machine = Machine(isHTTP2Stream: false)
        let id = Self.started(&machine, Self.request(.bytes, continueTimeout: .seconds(1)))
        let action = machine.receivedHead(Self.head(.expectationFailed), now: Self.start)
        #expect(action == .deliver)
        #expect(machine.current?.sending == .abandoned)
        let action2 = machine.continueTimedOut(id)
        #expect(action2 == nil)
        let action3 = machine.receivedEnd()
        #expect(action3 == .finish(body: nil, keepAlive: false, close: false))
    }

    @Test func finalHeadBeforeContinueResetsAnHTTP2Stream() {
        var machine = Machine(isHTTP2Stream: true)
        _ = Self.started(&machine, Self.request(.bytes, continueTimeout: .seconds(1)))
        _ = machine.receivedHead(Self.head(.expectationFailed), now: Self.start)
        let action = machine.receivedEnd()
        #expect(action == .finish(body: nil, keepAlive: false, close: true))
    }

    // MARK: Interim responses

    @Test func informationalHeadsAreCountedUpToTheLimit() {
        var machine = Machine(isHTTP2Stream: false)
        _ = Self.started(&machine, Self.request(informational: 2))
        let action = machine.receivedHead(Self.head(.custom(code: 103, reasonPhrase: "Early Hints")), now: Self.start)
        #expect(action == .none)
        let action2 = machine.receivedHead(Self.head(.processing), now: Self.start)
        #expect(action2 == .none)
        let limit = ResponseLimit(.informationalResponses, observed: 3, limit: 2)
        let action3 = machine.receivedHead(Self.head(.continue), now: Self.start)
        #expect(action3 == .end(.fail(.limitExceeded(limit), body: nil, close: true)))
        #expect(machine.current == nil)
    }

    @Test func switchingProtocolsIsAFinalHead() {
        var machine = Machine(isHTTP2Stream: false)
        _ = Self.started(&machine, Self.request(informational: 0))
        let action = machine.receivedHead(Self.head(.switchingProtocols), now: Self.start)
        #expect(action == .deliver)
    }

    // MARK: The response

    @Test func finalHeadIsDelivered() {
        var machine = Machine(isHTTP2Stream: false)
        _ = Self.started(&machine)
        let action = machine.receivedHead(Self.head(.ok, keepAlive: false), now: Self.start)
        #expect(action == .deliver)
        #expect(machine.current?.response == .receivingBody(keepAlive: false, noContent: false))
        #expect(!machine.contentlessHeadArrived)
    }

    @Test func eventsWithoutARequestDoNothing() {
        var machine = Machine(isHTTP2Stream: false)
        let action = machine.receivedHead(Self.head(.ok), now: Self.start)
        #expect(action == .none)
        let action2 = machine.receivedBody(Self.bytes(3), now: Self.start)
        #expect(action2 == .none)
        let action3 = machine.receivedEnd()
        #expect(action3 == .none)
        let action4 = machine.readComplete()
        #expect(action4 == .none)
        let action5 = machine.channelInactive()
        #expect(action5 == .none)
        // A channel error still closes the channel.
        let action6 = machine.errorCaught()
        #expect(action6 == .close)
    }

    @Test func bodyBytesAreHeldForTheReadCycle() {
        var machine = Machine(isHTTP2Stream: false)
        _ = Self.started(&machine)
        _ = machine.receivedHead(Self.head(.ok), now: Self.start)
        let action = machine.receivedBody(Self.bytes(3), now: Self.start)
        #expect(action == .held)
        let action2 = machine.receivedBody(Self.bytes(2), now: Self.start)
        #expect(action2 == .held)
        let action3 = machine.readComplete()
        #expect(action3 == .deliver(ReceivedBody(ByteBuffer(repeating: 7, count: 5))))
        #expect(machine.pendingBody == nil)
        let action4 = machine.readComplete()
        #expect(action4 == .none)
    }

    @Test func bodyBytesAreHandedOverAtTheChunkLimit() {
        var machine = Machine(isHTTP2Stream: false)
        _ = Self.started(&machine)
        _ = machine.receivedHead(Self.head(.ok), now: Self.start)
        let action = machine.receivedBody(Self.bytes(Machine.bodyChunkLimit - 1), now: Self.start)
        #expect(action == .held)
        guard case .deliver(let bytes) = machine.receivedBody(Self.bytes(1), now: Self.start) else {
            Issue.record("expected .deliver")
            return
        }
        #expect(bytes.byteCount == Machine.bodyChunkLimit)
        #expect(machine.pendingBody == nil)
    }

    @Test func endFinishesWithTheHeldBodyAndKeepsTheConnection() {
        var machine = Machine(isHTTP2Stream: false)
        _ = Self.started(&machine)
        _ = machine.receivedHead(Self.head(.ok), now: Self.start)
        _ = machine.receivedBody(Self.bytes(2), now: Self.start)
        let action = machine.receivedEnd()
        #expect(action == .finish(body: [7, 7], keepAlive: true, close: false))
        #expect(machine.current == nil)
    }

    @Test func endOfAConnectionCloseResponseDoesNotKeepTheConnection() {
        var machine = Machine(isHTTP2Stream: false)
        _ = Self.started(&machine)
        _ = machine.receivedHead(Self.head(.ok, keepAlive: false), now: Self.start)
        let action = machine.receivedEnd()
        #expect(action == .finish(body: nil, keepAlive: false, close: false))
    }

    @Test func contentOfAContentlessResponseIsDroppedOnHTTP2() {
        for (status, isHEAD) in [(HTTPResponseStatus.ok, true), (.noContent, false), (.notModified, false)] {
            var machine = Machine(isHTTP2Stream: true)
            _ = Self.started(&machine, Self.request(head: isHEAD))
            let action = machine.receivedHead(Self.head(status), now: Self.start)
            #expect(action == .deliver)
            #expect(machine.contentlessHeadArrived)
            let action2 = machine.receivedBody(Self.bytes(4), now: Self.start)
            #expect(action2 == .none)
            #expect(machine.pendingBody == nil)
        }
        // HTTP/1.1's decoder knows these have no body: the machine keeps what it is given.
        var http1 = Machine(isHTTP2Stream: false)
        _ = Self.started(&http1, Self.request(head: true))
        _ = http1.receivedHead(Self.head(.ok), now: Self.start)
        #expect(!http1.contentlessHeadArrived)
        let action3 = http1.receivedBody(Self.bytes(4), now: Self.start)
        #expect(action3 == .held)
    }

    @Test func contentlessHeadWithoutStreamEndCompletesAtTheEndOfTheReadCycle() {
        var machine = Machine(isHTTP2Stream: true)
        _ = Self.started(&machine, Self.request(head: true))
        _ = machine.receivedHead(Self.head(.ok), now: Self.start)
        let action = machine.readComplete()
        #expect(action == .end(.finish(body: nil, keepAlive: false, close: true)))
        #expect(machine.current == nil)
        #expect(!machine.contentlessHeadArrived)
    }

    @Test func contentlessHeadWithItsStreamEndFinishesNormally() {
        var machine = Machine(isHTTP2Stream: true)
        _ = Self.started(&machine, Self.request(head: true))
        _ = machine.receivedHead(Self.head(.ok), now: Self.start)
        let action = machine.receivedEnd()
        #expect(action == .finish(body: nil, keepAlive: true, close: false))
        let action2 = machine.readComplete()
        #expect(action2 == .none)
    }

    // MARK: The streamed request body

    @Test func bodyPartsAreWrittenAndCounted() {
        var machine = Machine(isHTTP2Stream: false)
        let id = Self.started(&machine, Self.request(.stream(length: 10)))
        let action = machine.bodyPartReady(id, count: 4)
        #expect(action)
        #expect(machine.current?.sending == .streaming(written: 4))
        machine.bodyPartWritten(id, now: Self.start + .seconds(3))
        #expect(machine.current?.lastActivity == Self.start + .seconds(3))
    }

    @Test func bodyPartsOfAnEndedRequestAreRefused() {
        var machine = Machine(isHTTP2Stream: false)
        let id = Self.started(&machine, Self.request(.stream(length: nil)))
        _ = machine.channelInactive()
        let action = machine.bodyPartReady(id, count: 4)
        #expect(!action)
        let action2 = machine.bodyEndReady(id)
        #expect(!action2)
        let next = Self.started(&machine)
        machine.bodyPartWritten(id, now: Self.start + .seconds(3))
        #expect(machine.current?.id == next)
        #expect(machine.current?.lastActivity == Self.start)
    }

    @Test func bodyEndCompletesTheRequest() {
        var machine = Machine(isHTTP2Stream: true)
        let id = Self.started(&machine, Self.request(.stream(length: nil)))
        let action = machine.bodyEndReady(id)
        #expect(action)
        #expect(machine.current?.sending == .complete)
        let action2 = machine.bodyEndReady(id)
        #expect(!action2)
        #expect(machine.isRequestComplete)
    }

    @Test func aBodyOfDeclaredLengthWrittenInFullIsCompleteOverHTTP1() {
        // The server may answer as soon as the last byte is in, before the task sees its sequence end.
        var machine = Machine(isHTTP2Stream: false)
        let id = Self.started(&machine, Self.request(.stream(length: 6)))
        let action = machine.bodyPartReady(id, count: 6)
        #expect(action)
        #expect(machine.isRequestComplete)
        _ = machine.receivedHead(Self.head(.ok), now: Self.start)
        let action2 = machine.receivedEnd()
        #expect(action2 == .finish(body: nil, keepAlive: true, close: false))
        // Over HTTP/2 the stream's end must be written.
        var http2 = Machine(isHTTP2Stream: true)
        let streamID = Self.started(&http2, Self.request(.stream(length: 6)))
        let action3 = http2.bodyPartReady(streamID, count: 6)
        #expect(action3)
        #expect(!http2.isRequestComplete)
    }

    @Test func earlyResponseToAStreamingRequestClosesTheConnection() {
        var machine = Machine(isHTTP2Stream: false)
        let id = Self.started(&machine, Self.request(.stream(length: 100)))
        let action = machine.bodyPartReady(id, count: 10)
        #expect(action)
        _ = machine.receivedHead(Self.head(.payloadTooLarge), now: Self.start)
        let action2 = machine.receivedEnd()
        #expect(action2 == .finish(body: nil, keepAlive: false, close: false))
        let action3 = machine.bodyPartReady(id, count: 10)
        #expect(!action3)
    }

    @Test func bodyFailureFailsTheRequest() {
        var machine = Machine(isHTTP2Stream: false)
        let id = Self.started(&machine, Self.request(.stream(length: nil)))
        let action = machine.bodyFailed(id, byTheChannel: false)
        #expect(action == .fail(.requestBodyFailed, body: nil, close: true))
        #expect(machine.current == nil)
    }

    @Test func bodyFailureCausedByTheChannelIsLeftToTheChannel() {
        var machine = Machine(isHTTP2Stream: false)
        let id = Self.started(&machine, Self.request(.stream(length: nil)))
        let action = machine.bodyFailed(id, byTheChannel: true)
        #expect(action == .none)
        #expect(machine.current?.id == id)
        // Once the end is written, the body can no longer fail the request.
        let action2 = machine.bodyEndReady(id)
        #expect(action2)
        let action3 = machine.bodyFailed(id, byTheChannel: false)
        #expect(action3 == .none)
    }

    // MARK: The read timeout

    @Test func readTimerReschedulesForWhatIsLeft() {
        var machine = Machine(isHTTP2Stream: false)
        let id = Self.started(&machine, Self.request(readTimeout: .seconds(10)))
        _ = machine.receivedHead(Self.head(.ok), now: Self.start + .seconds(4))
        let action = machine.readTimerFired(id, now: Self.start + .seconds(10), readsHeld: false)
        #expect(action == .reschedule(.seconds(4)))
        machine.headBytesArrived(now: Self.start + .seconds(12))
        let action2 = machine.readTimerFired(id, now: Self.start + .seconds(14), readsHeld: false)
        #expect(action2 == .reschedule(.seconds(8)))
    }

    @Test func readTimerRestartsWhileReadsAreHeld() {
        var machine = Machine(isHTTP2Stream: false)
        let id = Self.started(&machine, Self.request(readTimeout: .seconds(10)))
        let action = machine.readTimerFired(id, now: Self.start + .seconds(30), readsHeld: true)
        #expect(action == .reschedule(.seconds(10)))
        #expect(machine.current?.lastActivity == Self.start + .seconds(30))
    }

    @Test func readTimerFailsTheRequestOnceIdleForTheTimeout() {
        var machine = Machine(isHTTP2Stream: false)
        let id = Self.started(&machine, Self.request(readTimeout: .seconds(10)))
        _ = machine.receivedHead(Self.head(.ok), now: Self.start)
        _ = machine.receivedBody(Self.bytes(2), now: Self.start)
        let action = machine.readTimerFired(id, now: Self.start + .seconds(10), readsHeld: false)
        #expect(action == .end(.fail(.readTimedOut, body: [7, 7], close: true)))
        #expect(machine.current == nil)
    }

    @Test func readTimerWithoutATimeoutDoesNothing() {
        var machine = Machine(isHTTP2Stream: false)
        let id = Self.started(&machine)
        let action = machine.readTimerFired(id, now: Self.start + .seconds(600), readsHeld: false)
        #expect(action == .none)
    }

    // MARK: Failures

    @Test func channelErrorFailsTheRequestWithWhatArrivedAndCloses() {
        // A bad status, an oversized head, an HTTP/2 RST_STREAM: the channel reports an error.
        var machine = Machine(isHTTP2Stream: true)
        _ = Self.started(&machine)
        _ = machine.receivedHead(Self.head(.ok), now: Self.start)
        _ = machine.receivedBody(Self.bytes(1), now: Self.start)
        let action = machine.errorCaught()
        #expect(action == .fail(.channelError, body: [7], close: true))
        #expect(machine.current == nil)
    }

    @Test func earlyCloseFailsTheRequestWithWhatArrived() {
        var machine = Machine(isHTTP2Stream: false)
        let id = Self.started(&machine, Self.request(.stream(length: nil), continueTimeout: nil))
        _ = machine.receivedHead(Self.head(.ok), now: Self.start)
        _ = machine.receivedBody(Self.bytes(2), now: Self.start)
        let action = machine.channelInactive()
        #expect(action == .fail(.closed, body: [7, 7], close: false))
        let action2 = machine.bodyPartReady(id, count: 1)
        #expect(!action2)
    }
}

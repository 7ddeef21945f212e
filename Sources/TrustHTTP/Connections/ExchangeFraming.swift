import NIOCore
import NIOHTTP1

/// How an ``HTTPExchangeHandler`` puts its request on its channel and reads the response back: the messages of the
/// channel below it (`Inbound`, `Outbound`) to and from NIOHTTP1's request and response parts, which the handler and
/// its ``HTTPRequestStateMachine`` speak. ``HTTP1ExchangeFraming`` passes the parts through (NIO's HTTP/1.1 codec is
/// below); ``HTTP2ExchangeFraming`` turns them into an HTTP/2 stream's frames, in the handler itself, where a codec
/// handler of its own costs a handler and a pipeline context for every request. (`SendableMetatype`: the handler
/// names its framing in closures it hands to the event loop.)
protocol ExchangeFraming: SendableMetatype {
    /// What the channel below reads.
    associatedtype Inbound
    /// What the channel below writes.
    associatedtype Outbound

    init()

    /// The response parts `message` carries: none, one or two (a head or body bytes, and the end).
    mutating func read(_ message: Inbound) throws -> (HTTPClientResponsePart?, HTTPClientResponsePart?)

    /// The messages to write for `part` now (none, one or two); a framing may hold one back until the next part or
    /// ``flush()``.
    mutating func write(_ part: HTTPClientRequestPart, promise: EventLoopPromise<Void>?) throws -> (FramedWrite<Outbound>?, FramedWrite<Outbound>?)

    /// The message held back, if any, to write before a flush.
    mutating func flush() -> FramedWrite<Outbound>?
}

/// A message to write, with the promise of the write that carries it.
struct FramedWrite<Message> {
    var message: Message
    var promise: EventLoopPromise<Void>?
}

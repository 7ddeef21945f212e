import NIOCore

/// A deadline of an ``HTTPExchange`` — until its response head, or until its end (`total`) — run by its event
/// loop as a scheduled callback: when it passes first, the exchange fails as timed out, and the exchange cancels it
/// when the end it waits for comes first.
///
/// Two references, held in the loop's timer queue as they are: arming one allocates nothing, where a scheduled task
/// allocated its promise, three closure contexts and a callback to cancel it when the awaited future completed.
///
/// `didCancelScheduledCallback(eventLoop:)` keeps its empty default and must stay empty: SwiftNIO runs it on the
/// thread that cancels — possibly off the loop (``HTTPExchange/abort(_:)`` for a cancelled request) — while holding
/// the loop's tasks lock, and when a shutting-down loop drops its pending timers.
struct ExchangeDeadline: NIOScheduledCallbackHandler, Sendable {
    let exchange: HTTPExchange
    let total: Bool

    func handleScheduledCallback(eventLoop: some EventLoop) {
        exchange.deadlinePassed(total: total)
    }
}

extension HTTPExchange {
    /// Arms the deadlines of `timeouts` on `eventLoop` (the exchange's): one for the whole exchange when it also
    /// bounds the head, else one for the head and, when set, one for the end. On the event loop, before the request
    /// is written. `timeouts` is kept with the deadlines rather than given to the exchange's initializer, whose
    /// argument took room in the frame of `TrustHTTPClient.exchange` (measured: "Frame sizes" in RequestFlow.md).
    func armDeadlines(_ timeouts: Connection.ExchangeTimeouts, on eventLoop: any EventLoop) {
        if let total = timeouts.total, timeouts.totalCoversHead {
            armDeadline(total: true, in: total, timeouts, on: eventLoop)
        } else {
            armDeadline(total: false, in: timeouts.head, timeouts, on: eventLoop)
            if let total = timeouts.total { armDeadline(total: true, in: total, timeouts, on: eventLoop) }
        }
    }

    /// One deadline, kept until the end it waits for (``keepDeadline(_:total:timeouts:)``). Armed on the loop, where
    /// SwiftNIO's scheduling does not throw (that the loop is still open is a precondition there); only scheduling
    /// from another thread can, when waking the loop fails, and a loop already shut down then logs and drops the
    /// callback. A deadline pending when its loop shuts down never runs (NIO cancels it).
    private func armDeadline(total: Bool, in timeout: Duration, _ timeouts: Connection.ExchangeTimeouts, on eventLoop: any EventLoop) {
        let handler = ExchangeDeadline(exchange: self, total: total)
        guard let deadline = try? eventLoop.scheduleCallback(in: TimeAmount(timeout), handler: handler) else { return }
        keepDeadline(deadline, total: total, timeouts: timeouts)
    }

    /// A deadline passed before the end it waits for: whoever waits hears of the timeout at once
    /// (``endTimedOut(_:)``: nothing if the exchange ended meanwhile).
    func deadlinePassed(total: Bool) {
        endTimedOut { TrustHTTPClientError(.timedOut, timeoutMessage($0.message(total)), url: url) }
    }
}

import NIOCore
import NIOHTTP1

/// What the machine tells its driver to do after each event.
extension HTTPRequestStateMachine {
    /// How the request is written when it starts.
    enum Sending: Hashable, Sendable {
        /// The head alone (flushed, with the write's promise), then a timer of this length for `100 Continue`.
        case headAwaitingContinue(TimeAmount)
        /// The head (flushed, with the write's promise), then the body's task is started.
        case headThenStream
        /// The head, the body in memory (if any) and the end, flushed, with the write's promise.
        case whole
    }

    /// What ``start(_:channelIsActive:now:)`` asks for.
    enum StartAction: Hashable, Sendable {
        /// The channel is closed or busy: the request fails as closed, and its write with it.
        case refuse
        /// Tell the head limiter a response is expected, write as `sending` says, and schedule the read timeout.
        case start(RequestID, Sending, readTimeout: TimeAmount?)
    }

    /// How a held-back body is sent once it may go.
    enum BodySending: Hashable, Sendable {
        /// Write the bytes in memory and the end, flushed.
        case bytesAndEnd
        /// Flush, and start the body's task.
        case stream
    }

    /// Why the current request fails.
    enum Failure: Hashable, Sendable {
        /// The channel closed before the response was complete.
        case closed
        /// The channel reported this error (the driver has it).
        case channelError
        /// More interim responses than allowed.
        case limitExceeded(ResponseLimit)
        /// No bytes of the response for the read timeout.
        case readTimedOut
        /// The request body's source failed or yielded other than its declared length (the driver has the error).
        case requestBodyFailed
    }

    /// How the current request ends, or nothing.
    enum Ending: Hashable, Sendable {
        case none
        /// Hand over `body` (when not nil), then the exchange finishes: the connection is reusable when `keepAlive`;
        /// `close` resets the HTTP/2 stream (or closes the channel).
        case finish(body: ReceivedBody?, keepAlive: Bool, close: Bool)
        /// Hand over `body` (when not nil), then the exchange fails; `close` closes the channel.
        case fail(Failure, body: ReceivedBody?, close: Bool)
        /// No request to fail; close the channel.
        case close
    }

    /// What a response head asks for.
    enum HeadAction: Hashable, Sendable {
        /// Nothing: no request, or an interim head that changes nothing.
        case none
        /// `100 Continue` for a held-back body: cancel the timer and send it.
        case sendBody(BodySending)
        /// The final head: cancel the `100 Continue` timer if it runs (the body is not sent) and hand the head over.
        case deliver
        case end(Ending)
    }

    /// What body bytes ask for.
    enum BodyAction: Hashable, Sendable {
        /// Nothing: no request, or a response without content whose bytes are dropped.
        case none
        /// Count the bytes as buffered for the reader (``BodyFlowControl``); they are held for the read cycle.
        case held
        /// Count the bytes as buffered, then hand over these (the cycle's bytes reached ``bodyChunkLimit``).
        case deliver(ReceivedBody)
    }

    /// What the end of a read cycle asks for.
    enum ReadCompleteAction: Hashable, Sendable {
        case none
        /// Hand over the cycle's body bytes.
        case deliver(ReceivedBody)
        case end(Ending)
    }

    /// What the read timer asks for.
    enum ReadTimerAction: Hashable, Sendable {
        case none
        /// Check again after this long.
        case reschedule(TimeAmount)
        case end(Ending)
    }
}

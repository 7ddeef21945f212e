import NIOConcurrencyHelpers
import NIOCore

/// Backpressure for a streamed response body: the channel stops reading from the socket while more
/// than `highWatermark` bytes wait unread, and resumes once the reader is below `lowWatermark`.
/// (For HTTP/2 the stream's flow-control window then stops the server as well.)
///
/// A value whose copies share one state (its lock's box): one allocation per exchange, where a class holding the
/// box took two.
struct BodyFlowControl: Sendable {
    private struct State {
        var buffered = 0
        var readPending = false
        /// The channel whose reads are held: set before the first byte arrives (``bind(_:)``).
        var channel: (any Channel)?
    }

    let highWatermark: Int
    let lowWatermark: Int
    private let state = NIOLockedValueBox(State())

    init(highWatermark: Int = 1 << 20, lowWatermark: Int = 256 << 10) {
        self.highWatermark = highWatermark
        self.lowWatermark = lowWatermark
    }

    /// The channel the body arrives on (an HTTP/2 stream is known only once it is open).
    func bind(_ channel: any Channel) {
        state.withLockedValue { $0.channel = channel }
    }

    /// Bytes handed to the reader and not yet taken.
    var bufferedBytes: Int { state.withLockedValue { $0.buffered } }

    /// Whether socket reads are held because the reader is behind (its own wait is not the peer's).
    var isHoldingReads: Bool { state.withLockedValue { $0.readPending } }

    /// Called on the event loop when bytes are handed to the reader.
    func produced(_ count: Int) {
        state.withLockedValue { $0.buffered += count }
    }

    /// Called on the event loop for a `read` event: whether to pass it on now (else it is held).
    func shouldRead() -> Bool {
        state.withLockedValue { state in
            if state.buffered > highWatermark {
                state.readPending = true
                return false
            }
            return true
        }
    }

    /// Called by the reader after taking `count` bytes.
    func consumed(_ count: Int) {
        let resume = state.withLockedValue { state -> (any Channel)? in
            state.buffered -= count
            if state.readPending && state.buffered <= lowWatermark {
                state.readPending = false
                return state.channel
            }
            return nil
        }
        if let channel = resume {
            channel.eventLoop.execute { channel.read() }
        }
    }
}

import NIOConcurrencyHelpers
import NIOCore

/// Backpressure for a streamed response body: the channel stops reading from the socket while more
/// than `highWatermark` bytes wait unread, and resumes once the reader is below `lowWatermark`.
/// (For HTTP/2 the stream's flow-control window then stops the server as well.)
final class BodyFlowControl: Sendable {
    private struct State {
        var buffered = 0
        var readPending = false
    }

    let highWatermark: Int
    let lowWatermark: Int
    private let state = NIOLockedValueBox(State())
    private let channel: any Channel

    init(channel: any Channel, highWatermark: Int = 1 << 20, lowWatermark: Int = 256 << 10) {
        self.channel = channel
        self.highWatermark = highWatermark
        self.lowWatermark = lowWatermark
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
        let resume = state.withLockedValue { state -> Bool in
            state.buffered -= count
            if state.readPending && state.buffered <= lowWatermark {
                state.readPending = false
                return true
            }
            return false
        }
        if resume {
            let channel = self.channel
            channel.eventLoop.execute { channel.read() }
        }
    }
}

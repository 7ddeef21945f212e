/// Backpressure for a streamed response body, as a value: the channel stops reading from the socket while more
/// than `highWatermark` bytes wait unread, and resumes once the reader is below `lowWatermark`. (For HTTP/2 the
/// stream's flow-control window then stops the server as well.)
///
/// The defaults — hold reads above 256 KiB unread, resume at 64 KiB — make the high watermark one read cycle's most
/// (``HTTPRequestStateMachine/bodyChunkLimit``) and one HTTP/2 stream window (``HandshakeWaiter/http2StreamWindow``).
/// 1 MiB and 256 KiB were measured and not kept: streaming 1 GiB over HTTP/1.1 (`trust-http-bench`, streamed body),
/// the client's peak RSS was about 2 MiB higher, for the same throughput: buffers that lived longer, in fresh pages.
///
/// Kept in its exchange's locked state (``HTTPExchange``), which the event loop and the reader share: one lock per
/// step and no allocation of its own; the exchange carries out what it says (holding a `read`, issuing one).
struct BodyFlowControl: Sendable {
    let highWatermark: Int
    let lowWatermark: Int
    /// Bytes handed to the reader and not yet taken.
    private(set) var buffered = 0
    /// Whether a socket read is held because the reader is behind (its own wait is not the peer's).
    private(set) var readPending = false

    init(highWatermark: Int = 256 << 10, lowWatermark: Int = 64 << 10) {
        self.highWatermark = highWatermark
        self.lowWatermark = lowWatermark
    }

    /// Bytes were handed to the reader (on the event loop).
    mutating func produced(_ count: Int) {
        buffered += count
    }

    /// A `read` event (on the event loop): whether to pass it on now; else it is held until the reader catches up.
    mutating func shouldRead() -> Bool {
        guard buffered > highWatermark else { return true }
        readPending = true
        return false
    }

    /// The reader took `count` bytes: whether the held read is to be issued now.
    mutating func consumed(_ count: Int) -> Bool {
        buffered -= count
        guard readPending && buffered <= lowWatermark else { return false }
        readPending = false
        return true
    }
}

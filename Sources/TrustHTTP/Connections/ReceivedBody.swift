import NIOCore

/// The response body bytes of one read cycle, as the HTTP decoder handed them over: the buffers themselves, none
/// copied. The cycle's pieces travel to the reader together (one hand-over across threads per cycle, not per
/// piece), and the reader gets them one `ByteBuffer` at a time.
///
/// Two bodies are equal when they hold the same bytes, however these are divided into pieces.
struct ReceivedBody: Sendable, Hashable, ExpressibleByArrayLiteral {
    /// The first piece (the only one, in the common case: no array is made).
    private(set) var first: ByteBuffer
    /// The pieces after the first, in order.
    private(set) var rest: [ByteBuffer] = []
    /// The bytes in all pieces.
    private(set) var byteCount: Int

    init(_ buffer: ByteBuffer) {
        first = buffer
        byteCount = buffer.readableBytes
    }

    /// A body of these bytes, in one piece (for tests and bodies already read).
    init(arrayLiteral bytes: UInt8...) {
        self.init(ByteBuffer(bytes: bytes))
    }

    /// Adds the next piece of the cycle.
    mutating func append(_ buffer: ByteBuffer) {
        rest.append(buffer)
        byteCount += buffer.readableBytes
    }

    /// How many pieces there are.
    var pieceCount: Int { 1 + rest.count }

    /// The piece at `index` (0 is the first), nil past the last.
    func piece(at index: Int) -> ByteBuffer? {
        if index == 0 { return first }
        return index <= rest.count ? rest[index - 1] : nil
    }

    /// All the bytes, in one buffer (a copy unless there is a single piece).
    var joined: ByteBuffer {
        guard !rest.isEmpty else { return first }
        var buffer = ByteBufferAllocator().buffer(capacity: byteCount)
        buffer.writeImmutableBuffer(first)
        for piece in rest { buffer.writeImmutableBuffer(piece) }
        return buffer
    }

    static func == (lhs: ReceivedBody, rhs: ReceivedBody) -> Bool {
        lhs.byteCount == rhs.byteCount && lhs.joined == rhs.joined
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(joined)
    }
}

import NIOCore

/// What a hostile dialect wants written next.
enum HostileStep {
    /// These bytes; more may follow at once.
    case write(ByteBuffer)
    /// Nothing for `TimeAmount`, then ask again (a trickle).
    case pause(TimeAmount)
    /// Nothing until the client sends something (a request, a WINDOW_UPDATE…) — possibly never.
    case wait
    /// Close the connection.
    case close
}

/// One side of a hostile conversation: reads what the client sends and says what to write next.
protocol HostileDialect: AnyObject {
    /// Takes the client's bytes; returns false when the connection should be closed (unreadable input).
    func receive(_ bytes: inout ByteBuffer) -> Bool
    /// What to write next.
    func next(_ allocator: ByteBufferAllocator) -> HostileStep
}

/// The handler of one hostile connection (behind TLS, or directly on the socket): feeds the
/// client whatever its dialect produces, only as fast as the socket takes it, and closes the
/// connection when its time or byte budget is spent.
final class LabHostileConnection: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Bounds and pace, the same for every connection of a server.
    struct Limits: Sendable {
        /// The pause between two trickled bytes.
        var trickleInterval: TimeAmount
        /// How long a connection may last.
        var connectionTimeLimit: TimeAmount
        /// How many bytes are written to one connection at most.
        var byteLimit: Int
    }

    /// Bytes written before the pump flushes (so that writability reflects them).
    private static let flushEvery = 64 * 1024
    /// Bytes written in one turn of the event loop before the pump yields to other connections.
    private static let turnBudget = 1024 * 1024

    private let dialect: any HostileDialect
    private let limits: Limits
    private var written = 0
    private var pausing = false
    private var pumpQueued = false
    private var closed = false
    private var deadline: Scheduled<Void>?

    init(behaviour: LabHostileServer.Behaviour, host: String, scheme: String, port: Int, limits: Limits) {
        self.limits = limits
        if behaviour.isHTTP2 {
            dialect = HostileHTTP2(behaviour: behaviour)
        } else {
            dialect = HostileHTTP1(behaviour: behaviour, host: host, scheme: scheme, port: port, trickleInterval: limits.trickleInterval)
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: limits.connectionTimeLimit) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        closed = true
        deadline?.cancel()
        deadline = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        deadline?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        guard !closed else { return }
        guard dialect.receive(&bytes) else {
            close(context: context)
            return
        }
        pump(context: context)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { pump(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A client that gives up (reset, TLS alert, closed mid-write) is what these servers are for.
        close(context: context)
    }

    private func close(context: ChannelHandlerContext) {
        guard !closed else { return }
        closed = true
        context.close(promise: nil)
    }

    /// Closes once everything written so far has reached the socket (a client that stops reading
    /// meets the time limit instead).
    private func closeAfterWrites(context: ChannelHandlerContext) {
        guard !closed else { return }
        closed = true
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0))).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Writes what the dialect produces until it pauses or waits, the socket pushes back, or this turn's budget is spent.
    private func pump(context: ChannelHandlerContext) {
        guard !closed, !pausing else { return }
        var unflushed = 0
        var thisTurn = 0
        defer { if unflushed > 0 && !closed { context.flush() } }
        while context.channel.isWritable {
            switch dialect.next(context.channel.allocator) {
            case .write(var bytes):
                let last = written + bytes.readableBytes >= limits.byteLimit
                if last, let cut = bytes.readSlice(length: limits.byteLimit - written) { bytes = cut }
                let count = bytes.readableBytes
                context.write(wrapOutboundOut(bytes), promise: nil)
                written += count
                unflushed += count
                thisTurn += count
                if last {
                    unflushed = 0
                    closeAfterWrites(context: context)
                    return
                }
                if unflushed >= Self.flushEvery {
                    context.flush()
                    unflushed = 0
                }
                if thisTurn >= Self.turnBudget {
                    schedulePump(context: context)
                    return
                }
            case .pause(let interval):
                pausing = true
                context.eventLoop.assumeIsolated().scheduleTask(in: interval) { [self] in
                    pausing = false
                    pump(context: context)
                }
                return
            case .wait:
                return
            case .close:
                unflushed = 0
                closeAfterWrites(context: context)
                return
            }
            if closed { return }
        }
    }

    /// Goes on pumping in a later turn of the event loop (other connections get theirs first).
    private func schedulePump(context: ChannelHandlerContext) {
        guard !pumpQueued else { return }
        pumpQueued = true
        context.eventLoop.assumeIsolated().execute { [self] in
            pumpQueued = false
            pump(context: context)
        }
    }
}

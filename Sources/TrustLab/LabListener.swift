import NIOConcurrencyHelpers
import NIOCore

/// A listening socket on 127.0.0.1 (a random port) that keeps track of the connections it
/// accepted, so a lab server that misbehaves on purpose can count them and close every one at
/// shutdown — a stalled or flooding connection included. Shared by ``LabFaultServer`` and
/// ``LabHostileServer``.
final class LabListener: Sendable {
    /// The port, on 127.0.0.1.
    let port: Int
    private let channel: any Channel
    private let state: NIOLockedValueBox<(accepted: Int, open: [ObjectIdentifier: any Channel])>

    private init(port: Int, channel: any Channel, state: NIOLockedValueBox<(accepted: Int, open: [ObjectIdentifier: any Channel])>) {
        self.port = port
        self.channel = channel
        self.state = state
    }

    /// Listens; `configure` sets up each accepted connection (on its event loop) and gets the listening port.
    static func bind(group: any EventLoopGroup, _ configure: @escaping @Sendable (any Channel, Int) throws -> Void) async throws -> LabListener {
        let state = NIOLockedValueBox<(accepted: Int, open: [ObjectIdentifier: any Channel])>((0, [:]))
        let (channel, port) = try await LabServer.bind(group: group) { channel in
            let id = ObjectIdentifier(channel)
            state.withLockedValue { state in
                state.accepted += 1
                state.open[id] = channel
            }
            channel.closeFuture.whenComplete { _ in _ = state.withLockedValue { $0.open.removeValue(forKey: id) } }
            return channel.eventLoop.makeCompletedFuture { try configure(channel, channel.localAddress?.port ?? 0) }
        }
        return LabListener(port: port, channel: channel, state: state)
    }

    /// Connections accepted so far.
    var acceptedConnections: Int { state.withLockedValue { $0.accepted } }

    /// Connections still open.
    var openConnections: Int { state.withLockedValue { $0.open.count } }

    /// Closes the listener, then every connection still open.
    func close() async {
        try? await channel.close()
        for connection in state.withLockedValue({ Array($0.open.values) }) {
            try? await connection.close()
            // A connection the peer was already closing refuses close() at once, before its close
            // future (which takes it off the list) has completed: wait for that future too.
            try? await connection.closeFuture.get()
        }
    }
}

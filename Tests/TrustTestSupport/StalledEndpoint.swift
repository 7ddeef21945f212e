import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP endpoint on 127.0.0.1 that accepts every connection and never reads or answers; it tells which
/// connections the client has closed (POLLRDHUP), i.e. given up on.
package final class StalledEndpoint: Sendable {
    package let port: Int
    private let listener: Int32
    private let accepted = Mutex<[Int32]>([])

    package init() throws {
        (listener, port) = try LoopbackSocket.bind(backlog: 16)
        LoopbackSocket.acceptConnections(on: listener) { [self] connection in
            accepted.withLock { $0.append(connection) }
        }
    }

    /// `scheme://127.0.0.1:PORT/path` (https: a TLS client stalls in its handshake; http: waiting for the answer).
    package func url(_ scheme: String = "https", path: String = "/report") -> URL {
        var components = URLComponents()
        components.scheme = scheme
        components.host = "127.0.0.1"
        components.port = port
        components.path = path
        return components.url ?? URL(fileURLWithPath: "/")
    }

    /// Connections accepted so far.
    package var connections: Int { accepted.withLock { $0.count } }
    /// Connections the client has closed.
    package var closed: Int {
        accepted.withLock { list in
            list.filter { descriptor in
                // POLLRDHUP (Linux, 0x2000; not exported to Swift): the peer has shut down its side.
                let readHangUp: Int16 = 0x2000
                var entry = pollfd(fd: descriptor, events: readHangUp, revents: 0)
                return poll(&entry, 1, 0) == 1 && entry.revents & (readHangUp | Int16(POLLHUP)) != 0
            }.count
        }
    }

    package func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        accepted.withLock { list in for descriptor in list { Glibc.close(descriptor) } }
    }
}

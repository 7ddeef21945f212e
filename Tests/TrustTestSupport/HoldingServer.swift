import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A plain-TCP server on 127.0.0.1 that reads each request head (up to its empty line), keeps it, and
/// never answers: the client's request stays in flight until the client gives up or is ended — for
/// tests that look at a command while it waits (its `/proc/PID/cmdline`). As an HTTP proxy (`-x`) it
/// receives the proxied request (or the CONNECT) the same way. Plain sockets: it shares nothing with
/// the client under test.
package final class HoldingServer: Sendable {
    package let port: Int
    private let listener: Int32
    private let heads = Mutex<[String]>([])

    package init() throws {
        (listener, port) = try LoopbackSocket.bind(backlog: 16)
        LoopbackSocket.acceptConnections(on: listener) { [self] connection in
            Thread.detachNewThread { [self] in hold(connection) }
        }
    }

    package var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The request heads received so far.
    package var requestHeads: [String] { heads.withLock { $0 } }

    private func hold(_ connection: Int32) {
        defer { close(connection) }
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end = Array("\r\n\r\n".utf8)
        while !(request.count >= end.count && Array(request.suffix(end.count)) == end) {
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return }
            request += buffer[..<count]
        }
        let head = String(decoding: request, as: UTF8.self)
        heads.withLock { $0.append(head) }
        // Silence until the client closes.
        while recv(connection, &buffer, buffer.count, 0) > 0 {}
    }

    /// Stops accepting (connections held end when their client does).
    package func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}

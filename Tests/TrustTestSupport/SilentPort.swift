import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP port on 127.0.0.1 that listens but never accepts: connections complete in the kernel's
/// backlog, and what a client sends fills the socket buffers and is never read — a peer that has
/// stopped taking the request (a stalled upload) without closing.
package final class SilentPort {
    package let port: Int
    private let descriptor: Int32

    package init() throws {
        // A small receive buffer (inherited by the connections the kernel completes) so that a
        // client's writes stop after a few kilobytes rather than the megabytes loopback allows.
        (descriptor, port) = try LoopbackSocket.bind(backlog: 4, receiveBuffer: 4096)
    }

    package func close() { Glibc.close(descriptor) }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The socket setup of the plain-socket test servers (``RefusingPort``, ``SilentPort``, ``HoldingServer``,
/// ``StalledEndpoint``): a TCP socket on 127.0.0.1 and, for those that take connections, a thread accepting them.
enum LoopbackSocket {
    struct Failure: Error, CustomStringConvertible { var description: String }

    /// A TCP socket bound to 127.0.0.1 on a port of the kernel's choosing, listening when `backlog` is
    /// given, with `SO_RCVBUF` set to `receiveBuffer` when that is.
    static func bind(backlog: Int32?, receiveBuffer: Int32? = nil) throws -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket() failed: \(errno)") }
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw -> Bool in
                Glibc.bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
            }
        }
        guard bound, backlog.map({ listen(descriptor, $0) == 0 }) ?? true else {
            let code = errno
            Glibc.close(descriptor)
            throw Failure(description: "bind() or listen() failed: \(code)")
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Accepts connections on `listener` on a thread of its own, handing each to `handle`, until the listener is
    /// shut down.
    static func acceptConnections(on listener: Int32, _ handle: @escaping @Sendable (Int32) -> Void) {
        Thread.detachNewThread {
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                handle(connection)
            }
        }
    }
}

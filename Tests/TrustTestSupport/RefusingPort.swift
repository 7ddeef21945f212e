import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP port on 127.0.0.1 that is bound but never listens, so every connection to it is refused (ECONNREFUSED)
/// and no other socket can take it until ``close()``.
package final class RefusingPort {
    package let port: Int
    private let descriptor: Int32

    package init() throws {
        (descriptor, port) = try LoopbackSocket.bind(backlog: nil)
    }

    package func close() { Glibc.close(descriptor) }
}

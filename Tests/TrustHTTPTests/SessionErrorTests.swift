import Foundation
import NIOCore
import NIOPosix
import Testing
import TrustHTTP
import TrustLab
import TrustHTTPTestSupport
import TrustTestSupport

/// `SessionError` as Foundation code expects an error: a `LocalizedError` whose description is the
/// error's own (never a secret), and the lower-level error kept as an error.
@Suite("SessionError: LocalizedError, the underlying error")
struct SessionErrorTests {
    @Test func refusedConnectionKeepsNIOsError() async throws {
        // A port nobody listens on: bound (so no other test's server can take it while this runs) but not listening.
        let (socket, port) = try boundSocketNotListening()
        defer { close(socket) }
        let session = try labSession()
        let secret = "Very-S3cret-Pass"
        let error = try #require(await sessionError { try await session.data(for: Request(url: URL(string: "https://alice:\(secret)@127.0.0.1:\(port)/")!)) })
        await session.shutdown()
        #expect(error.code == .cannotConnectToHost)
        let underlying = try #require(error.underlyingError)
        #expect(error.underlying == "\(underlying)")
        #expect(error.localizedDescription == error.description)
        #expect(!error.localizedDescription.contains(secret))
        #expect((error as any Error).localizedDescription.contains("cannotConnectToHost"))
    }
}

/// A TCP socket bound to a kernel-picked loopback port without `listen`: connecting to it is refused
/// (RST), and the port stays reserved until the socket is closed.
func boundSocketNotListening() throws -> (Int32, Int) {
    #if os(Linux)
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
    }
    guard bound else {
        close(descriptor)
        throw POSIXError(.EADDRINUSE)
    }
    return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
}

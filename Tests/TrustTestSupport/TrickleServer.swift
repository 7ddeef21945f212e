import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A plain-HTTP/1.1 server on 127.0.0.1 with one behaviour for every connection: a response head,
/// `first` body bytes at once, then `chunk` bytes every `interval` seconds until `total` (or, with
/// no interval, silence after the first bytes) — for streaming, interrupt and speed tests, where
/// the lab's servers send everything at once. Written with plain sockets so the client under test
/// meets a server that shares nothing with it.
package final class TrickleServer: Sendable {
    package let port: Int
    private let listener: Int32

    /// - Parameters:
    ///   - total: body bytes in all.
    ///   - announcesLength: whether the head carries `Content-Length` (else the body ends at close, RFC 9112 §6.3).
    package init(total: Int, announcesLength: Bool = true, first: Int, chunk: Int = 1024, interval: Double?) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        Thread.detachNewThread {
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                Thread.detachNewThread {
                    Self.serve(connection, total: total, announcesLength: announcesLength, first: first, chunk: chunk, interval: interval)
                }
            }
        }
    }

    package var baseURL: String { "http://127.0.0.1:\(port)" }

    private static func serve(_ connection: Int32, total: Int, announcesLength: Bool, first: Int, chunk: Int, interval: Double?) {
        defer { close(connection) }
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.ends(with: Array("\r\n\r\n".utf8)) {
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return }
            request += buffer[..<count]
        }
        var head = "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\nconnection: close\r\n"
        if announcesLength { head += "content-length: \(total)\r\n" }
        guard send(all: Array((head + "\r\n").utf8), to: connection) else { return }
        var sent = min(first, total)
        guard send(all: [UInt8](repeating: 0x61, count: sent), to: connection) else { return }
        guard let interval else {
            // Silence, until the client gives up.
            while recv(connection, &buffer, buffer.count, 0) > 0 {}
            return
        }
        while sent < total {
            Thread.sleep(forTimeInterval: interval)
            let size = min(chunk, total - sent)
            guard send(all: [UInt8](repeating: 0x61, count: size), to: connection) else { return }
            sent += size
        }
    }

    private static func send(all bytes: [UInt8], to connection: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// Stops accepting (connections in progress end when their client does).
    package func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}

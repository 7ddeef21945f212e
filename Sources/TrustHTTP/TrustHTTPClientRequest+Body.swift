import NIOCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension TrustHTTPClientRequest {
    /// A request body: bytes in memory, a file, or an asynchronous sequence of chunks.
    ///
    /// A body that streams is read only as the connection can take it: at most 512 KiB (and one chunk)
    /// is handed to the connection ahead of what the socket, or the HTTP/2 stream's flow-control
    /// window, has taken, so a large upload holds about that much in memory at a time.
    ///
    /// A request may have to be sent more than once: after an authentication challenge (401, 407), a
    /// redirect that keeps the method (307, 308), an `Expect: 100-continue` the server refused (417),
    /// or an HTTP/2 stream the server refused before reading it. So a streamed body is given as a
    /// function that makes the sequence, called once per send — as URLSession asks its delegate for a
    /// new body stream (`needNewBodyStream`).
    ///
    /// With a known ``length`` the request carries `Content-Length`, and a sequence that yields fewer
    /// or more bytes fails the request (the server would read the rest of the connection as body, or
    /// the excess as the next request). Nothing past the declared length is ever written; once the last
    /// declared byte is out, a server may answer before the excess is seen. Without a length, HTTP/1.1
    /// sends the body chunked (RFC 9112 §7.1) and HTTP/2 in DATA frames until END_STREAM (RFC 9113 §8.1).
    public struct Body: Sendable, CustomStringConvertible {
        /// Writes every chunk of one send of the body with `write`, in order.
        typealias Writer = @Sendable (_ write: (ByteBuffer) async throws -> Void) async throws -> Void

        enum Content: Sendable {
            case bytes(ByteBuffer)
            case stream(Writer)
        }

        let content: Content
        /// The body's length in bytes, when known before it is sent.
        public let length: Int?
        /// What the body is, for descriptions (never its bytes).
        private let summary: String

        /// The bytes of `buffer`, sent as they are (no copy).
        public static func bytes(_ buffer: ByteBuffer) -> TrustHTTPClientRequest.Body {
            TrustHTTPClientRequest.Body(content: .bytes(buffer), length: buffer.readableBytes, summary: "\(buffer.readableBytes) bytes")
        }

        /// The bytes of `bytes` (`Data`, `[UInt8]`…), copied once into the buffer that is sent.
        public static func bytes(_ bytes: some Sequence<UInt8>) -> TrustHTTPClientRequest.Body {
            .bytes(ByteBuffer(bytes: bytes))
        }

        /// The UTF-8 bytes of `text`.
        public static func text(_ text: String) -> TrustHTTPClientRequest.Body {
            .bytes(ByteBuffer(string: text))
        }

        /// The buffers of a sequence made by `makeSequence`, called once each time the request is sent; each is
        /// written as it is (no copy).
        /// - Parameters:
        ///   - length: the total in bytes when known (sent as `Content-Length`); `nil` sends the body
        ///     chunked (HTTP/1.1) or to END_STREAM (HTTP/2).
        ///   - makeSequence: makes the sequence of buffers for one send.
        public static func stream<Buffers: AsyncSequence & Sendable>(
            length: Int?, _ makeSequence: @escaping @Sendable () -> Buffers
        ) -> TrustHTTPClientRequest.Body where Buffers.Element == ByteBuffer {
            TrustHTTPClientRequest.Body(
                content: .stream({ write in
                    for try await buffer in makeSequence() where buffer.readableBytes > 0 {
                        try await write(buffer)
                    }
                }), length: length, summary: length.map { "a stream of \($0) bytes" } ?? "a stream")
        }

        /// The chunks of a sequence made by `makeSequence` (`Data`, `[UInt8]`…), called once each time the
        /// request is sent; each chunk is copied once into the buffer that is written.
        /// - Parameters:
        ///   - length: the total in bytes when known (sent as `Content-Length`); `nil` sends the body
        ///     chunked (HTTP/1.1) or to END_STREAM (HTTP/2).
        ///   - makeSequence: makes the sequence of chunks for one send.
        public static func stream<Chunks: AsyncSequence & Sendable>(
            length: Int?, _ makeSequence: @escaping @Sendable () -> Chunks
        ) -> TrustHTTPClientRequest.Body where Chunks.Element: DataProtocol {
            TrustHTTPClientRequest.Body(
                content: .stream({ write in
                    for try await chunk in makeSequence() where !chunk.isEmpty {
                        try await write(ByteBuffer(bytes: chunk))
                    }
                }), length: length, summary: length.map { "a stream of \($0) bytes" } ?? "a stream")
        }

        /// The contents of the file at `url`, read in chunks as they are sent. Its size is read now
        /// (the `Content-Length`); a file that is missing or unreadable fails here, one that changes
        /// size before it is sent fails the request.
        /// - Parameters:
        ///   - url: the file's URL.
        ///   - chunkSize: the bytes read at a time (64 KiB by default).
        public static func file(_ url: URL, chunkSize: Int = 64 * 1024) throws(TrustHTTPClientError) -> TrustHTTPClientRequest.Body {
            let path = url.path(percentEncoded: false)
            let size = try regularFileSize(path, url: url)
            let chunkSize = max(1, chunkSize)
            return TrustHTTPClientRequest.Body(
                content: .stream({ write in
                    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                    guard descriptor >= 0 else {
                        let reason = String(cString: strerror(errno))
                        throw TrustHTTPClientError(.fileDoesNotExist, "cannot open the upload file \(path): \(reason)", url: url)
                    }
                    defer { close(descriptor) }
                    // A local file's read is short and bounded by `chunkSize`; the write that follows waits
                    // for the connection, so the file is read no faster than it is sent. Read straight into the
                    // buffer that is sent: no copy between.
                    let allocator = ByteBufferAllocator()
                    while true {
                        var chunk = allocator.buffer(capacity: chunkSize)
                        var failure: Int32 = 0
                        let count = chunk.writeWithUnsafeMutableBytes(minimumWritableBytes: chunkSize) { buffer in
                            while true {
                                let result = read(descriptor, buffer.baseAddress, chunkSize)
                                if result < 0 && errno == EINTR { continue }
                                if result < 0 { failure = errno }
                                return max(0, result)
                            }
                        }
                        if failure != 0 {
                            let reason = String(cString: strerror(failure))
                            throw TrustHTTPClientError(.noPermissionsToReadFile, "cannot read the upload file \(path): \(reason)", url: url)
                        }
                        guard count > 0 else { return }
                        try await write(chunk)
                    }
                }), length: size, summary: "the file \(path) (\(size) bytes)")
        }

        /// The size of the regular, readable file at `path`, or the typed error that says why it cannot be uploaded.
        private static func regularFileSize(_ path: String, url: URL) throws(TrustHTTPClientError) -> Int {
            let size: Int
            do {
                let attributes = try FileManager.default.attributesOfItem(atPath: path)
                // An Int (NSNumber) from Foundation, a UInt from FoundationEssentials.
                let bytes = (attributes[.size] as? Int) ?? (attributes[.size] as? UInt).flatMap(Int.init(exactly:))
                guard (attributes[.type] as? FileAttributeType) == .typeRegular, let bytes else {
                    throw TrustHTTPClientError(.fileIsDirectory, "\(path) is not a regular file", url: url)
                }
                size = bytes
            } catch let error as TrustHTTPClientError {
                throw error
            } catch {
                throw TrustHTTPClientError(.fileDoesNotExist, "cannot read the upload file \(path)", url: url, underlyingError: error)
            }
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw TrustHTTPClientError(.noPermissionsToReadFile, "no permission to read the upload file \(path)", url: url)
            }
            return size
        }

        /// What the body is — its kind and length, never its bytes.
        public var description: String { summary }

        /// The bytes, when the body is held in memory.
        var bytesInMemory: [UInt8]? {
            if case .bytes(let buffer) = content { return Array(buffer.readableBytesView) }
            return nil
        }

        /// Whether the body streams (a file or a sequence) rather than being held in memory.
        public var isStreamed: Bool {
            if case .stream = content { return true }
            return false
        }
    }
}

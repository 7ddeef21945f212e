import Dispatch
import NIOConcurrencyHelpers
import NIOCore
import TrustHTTP

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

/// curl's `-T/--upload-file FILE`: the request body read from a file as it is sent (a PUT unless `-X`
/// says otherwise). `-` (or curl's `.`) is standard input.
///
/// - A regular file is sent with its size as `Content-Length`, read a chunk at a time, and read
///   again from the start when the request must be sent again (after a 401, a 307 or a 417).
/// - Standard input, a pipe or a device has no size: the body goes chunked over HTTP/1.1 and to
///   END_STREAM over HTTP/2. It can be read once only; a request that must be sent again then
///   fails as curl's does ("necessary data rewind wasn't possible", exit 65).
/// - A URL without a file part (an empty path, or one ending in `/`) gets the file's name appended,
///   percent-encoded except for RFC 3986's unreserved characters, as curl does.
struct UploadFile: Sendable {
    /// The path given, `-` or `.` for standard input.
    let path: String

    /// A body that cannot be read again: standard input, a pipe or a device already sent once.
    struct CannotRewind: Error, CustomStringConvertible {
        var description: String { "necessary data rewind wasn't possible" }
    }

    /// A read of the file or standard input that failed, with its `errno`.
    struct ReadFailed: Error, CustomStringConvertible {
        let path: String
        let code: Int32
        var description: String { "cannot read \(path): \(String(cString: strerror(code)))" }
    }

    /// A file the upload cannot use (missing, a directory, unreadable), curl's CURLE_READ_ERROR (26).
    struct Unreadable: Error, CustomStringConvertible {
        let description: String
    }

    var readsStandardInput: Bool { path == "-" || path == "." }

    /// `url`, with the file's name appended when it has no file part.
    func target(for url: URL) -> URL {
        guard !readsStandardInput, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        let urlPath = components.percentEncodedPath
        guard urlPath.isEmpty || urlPath.hasSuffix("/") else { return url }
        let name = URL(filePath: path).lastPathComponent
        guard !name.isEmpty, name != "/" else { return url }
        // Every byte but RFC 3986 §2.3's unreserved characters encoded, as curl does.
        components.percentEncodedPath = (urlPath.isEmpty ? "/" : urlPath) + name.percentEncoded(keeping: .uriUnreserved)
        return components.url ?? url
    }

    /// The body: a regular file by its size, anything else (standard input, a pipe) once, of unknown length.
    func body() throws -> TrustHTTPClientRequest.Body {
        if readsStandardInput { return Self.readOnce(descriptor: STDIN_FILENO, path: "standard input", closes: false) }
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw Unreadable(description: "cannot open \(path): no such file")
        }
        switch attributes[.type] as? FileAttributeType {
        case .typeRegular?:
            do {
                return try .file(URL(filePath: path))
            } catch {
                throw Unreadable(description: error.message)
            }
        case .typeDirectory?:
            throw Unreadable(description: "\(path) is a directory")
        default:
            let descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else { throw Unreadable(description: "cannot open \(path): \(String(cString: strerror(errno)))") }
            return Self.readOnce(descriptor: descriptor, path: path, closes: true)
        }
    }

    /// A body of unknown length read from `descriptor`, which can be read once: the second send fails
    /// with ``CannotRewind``.
    private static func readOnce(descriptor: Int32, path: String, closes: Bool) -> TrustHTTPClientRequest.Body {
        let sent = NIOLockedValueBox(false)
        return .stream(length: nil) {
            let first = sent.withLockedValue { sent in
                defer { sent = true }
                return !sent
            }
            return DescriptorChunks(descriptor: descriptor, path: path, closesAtEnd: closes, rewound: !first)
        }
    }
}

/// The chunks read from a file descriptor, each read done off the cooperative thread pool (a read of
/// standard input may block for as long as its writer takes), straight into the buffer that is sent.
struct DescriptorChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let descriptor: Int32
    let path: String
    let closesAtEnd: Bool
    /// A second send of a body that cannot be read again: fails at once.
    let rewound: Bool
    static let chunkSize = 64 * 1024

    struct AsyncIterator: AsyncIteratorProtocol {
        let chunks: DescriptorChunks
        var ended = false

        mutating func next() async throws -> ByteBuffer? {
            guard !ended else { return nil }
            guard !chunks.rewound else { throw UploadFile.CannotRewind() }
            let (descriptor, path) = (chunks.descriptor, chunks.path)
            let chunk: ByteBuffer? = try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    var buffer = ByteBufferAllocator().buffer(capacity: DescriptorChunks.chunkSize)
                    while true {
                        var failure: Int32 = 0
                        let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: DescriptorChunks.chunkSize) { bytes in
                            let result = read(descriptor, bytes.baseAddress, DescriptorChunks.chunkSize)
                            if result < 0 { failure = errno }
                            return Swift.max(0, result)
                        }
                        if count > 0 { return continuation.resume(returning: buffer) }
                        if failure == 0 { return continuation.resume(returning: nil) }
                        if failure != EINTR { return continuation.resume(throwing: UploadFile.ReadFailed(path: path, code: failure)) }
                    }
                }
            }
            if chunk == nil {
                ended = true
                if chunks.closesAtEnd { close(descriptor) }
            }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: self) }
}

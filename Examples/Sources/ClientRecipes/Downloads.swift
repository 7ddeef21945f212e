// Large answers without holding them in memory: a download straight to a file with progress, a streamed body read
// piece by piece (and abandoned when the caller has seen enough), and a small answer collected with a bound.
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import TrustHTTP

/// Reading answers of any size with one client.
public struct Downloads: Sendable {
    /// The client requests go through.
    public let client: TrustHTTPClient

    public init(client: TrustHTTPClient) {
        self.client = client
    }

    /// Downloads `url` to `file` (replaced only once the body is complete), calling `progress` with the fraction done
    /// when the size is announced. Returns where the answer came from after redirects, and over which protocols.
    public func download(_ url: URL, to file: URL, progress: @escaping @Sendable (Double) -> Void = { _ in }) async throws -> Fetched {
        let response = try await client.download(for: TrustHTTPClientRequest(url: url), to: file) { step in
            if let fraction = step.fractionCompleted { progress(fraction) }
        }
        return Fetched(response)
    }

    /// The first line of `url`'s body, reading no further than it: the rest is abandoned and its connection closed.
    public func firstLine(of url: URL, limit: Int = 64 << 10) async throws -> String? {
        let response = try await client.bytes(for: TrustHTTPClientRequest(url: url))
        var line = ByteBuffer()
        for try await piece in response.body {
            var piece = piece
            if let end = piece.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
                line.writeBytes(piece.readableBytesView[..<end])
                response.body.cancel()
                return String(buffer: line)
            }
            line.writeBuffer(&piece)
            if line.readableBytes > limit { break }
        }
        response.body.cancel()
        return line.readableBytes > 0 && line.readableBytes <= limit ? String(buffer: line) : nil
    }

    /// A progress line for a terminal: `12.0 KiB of 48.0 KiB (25%)`, or without a total when the size is unknown.
    public static func progressLine(_ progress: DownloadProgress) -> String {
        func kib(_ bytes: Int64) -> String { String(format: "%.1f KiB", Double(bytes) / 1024) }
        guard let expected = progress.expectedBytes, let fraction = progress.fractionCompleted else { return kib(progress.bytesWritten) }
        return "\(kib(progress.bytesWritten)) of \(kib(expected)) (\(Int(fraction * 100))%)"
    }

    /// The response with at most `limit` bytes of its body, refused when the body is longer (before it is read
    /// when the server announces its length).
    public func head(of url: URL, limit: Int) async throws -> TrustHTTPClientResponse {
        try await client.bytes(for: TrustHTTPClientRequest(url: url)).collect(limit: limit)
    }

    /// `url`'s body, refused past `limit` bytes (before reading it when the server announces its length).
    public func small(_ url: URL, limit: Int) async throws -> ByteBuffer {
        var request = TrustHTTPClientRequest(url: url)
        request.maximumResponseBodySize = limit
        return try await client.data(for: request).body
    }

    /// Streams `url`'s body to `file` through the streaming response's own writer, bounded by `limit`.
    public func save(_ url: URL, to file: URL, limit: Int) async throws -> Int64 {
        let response = try await client.bytes(for: TrustHTTPClientRequest(url: url))
        let written = WrittenBytes()
        _ = try await response.write(to: file, limit: limit) { written.set($0.bytesWritten) }
        return written.value
    }

    /// What a finished request says about its transport.
    public struct Fetched: Sendable, Equatable {
        public var finalURL: URL
        public var redirects: Int
        public var httpVersion: String
        public var tlsVersion: String?
        public var status: Int

        init(_ response: TrustHTTPClientResponse) {
            finalURL = response.url
            redirects = response.redirects.count
            httpVersion = response.httpVersion == .http2 ? "2" : "\(response.httpVersion.major).\(response.httpVersion.minor)"
            tlsVersion = response.tlsVersion?.displayName
            status = response.status.code
        }
    }
}

/// The last byte count a download's progress reported.
final class WrittenBytes: Sendable {
    private let box = NIOLockedValueBox<Int64>(0)
    var value: Int64 { box.withLockedValue { $0 } }
    func set(_ value: Int64) { box.withLockedValue { $0 = value } }
}

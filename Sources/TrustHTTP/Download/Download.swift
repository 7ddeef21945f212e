import HTTPTypes
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How far a download has come, as ``TrustHTTPClient/download(for:to:progress:)`` reports it after each piece
/// of the body is written.
public struct DownloadProgress: Sendable, Equatable {
    /// Body bytes written to the file so far.
    public var bytesWritten: Int64
    /// The body's size, when the server announced it (`Content-Length` of a body not content-encoded);
    /// `nil` otherwise.
    public var expectedBytes: Int64?

    /// A progress report (for tests and adapters; the session makes its own).
    public init(bytesWritten: Int64, expectedBytes: Int64?) {
        self.bytesWritten = bytesWritten
        self.expectedBytes = expectedBytes
    }

    /// `bytesWritten` over `expectedBytes` (0 to 1), when the size is known.
    public var fractionCompleted: Double? {
        guard let expectedBytes, expectedBytes > 0 else { return nil }
        return min(1, Double(bytesWritten) / Double(expectedBytes))
    }
}

extension TrustHTTPClient {
    /// Sends `request` and writes the response body to the file at `destination` as it arrives, with
    /// backpressure (memory stays bounded whatever the size). The body goes to a new temporary file in
    /// the destination's folder, renamed over `destination` only once complete: a reader never sees
    /// half a file, and a failure, a cancellation or a timeout leaves `destination` as it was and no
    /// temporary file behind. Whatever the status, the body is written (as URLSession's download tasks
    /// and `curl -o` do): check ``TrustHTTPClientResponse/statusCode``.
    ///
    /// The collection bound of ``ResponseLimits`` does not apply (the body is not held); the request's
    /// ``TrustHTTPClientRequest/maximumResponseBodySize``, when set, does. The timeouts are those of
    /// ``bytes(for:)``: the request timeout up to the response head, the read timeout for each wait,
    /// the resource timeout (when configured) for the whole transfer.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - destination: The file to write (created, or replaced once the body is complete).
    ///   - progress: Called after each piece written (on the downloading task).
    /// - Returns: the response, its ``TrustHTTPClientResponse/body`` empty (the body is in the file).
    /// - Throws: ``TrustHTTPClientError``: the request's errors, ``TrustHTTPClientError/Code/cannotCreateFile`` or
    ///   ``TrustHTTPClientError/Code/cannotWriteToFile`` for the file.
    public func download(
        for request: TrustHTTPClientRequest, to destination: URL, progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws -> TrustHTTPClientResponse {
        let response = try await bytes(for: request)
        return try await response.write(to: destination, limit: request.maximumResponseBodySize ?? .max, progress: progress)
    }
}

extension TrustHTTPClientStreamingResponse {
    /// Writes the rest of the body to the file at `destination` (see ``TrustHTTPClient/download(for:to:progress:)``):
    /// through a temporary file beside it, renamed into place once complete, removed on any failure.
    /// A body longer than `limit` bytes fails with ``TrustHTTPClientError/Code/responseTooLarge``.
    ///
    /// - Parameters:
    ///   - destination: The file to write (created, or replaced once the body is complete).
    ///   - limit: The most body bytes accepted.
    ///   - progress: Called after each piece written.
    /// - Returns: the response, its ``TrustHTTPClientResponse/body`` empty (the body is in the file).
    public func write(
        to destination: URL, limit: Int = .max, progress: (@Sendable (DownloadProgress) -> Void)? = nil
    ) async throws -> TrustHTTPClientResponse {
        let file: AtomicFile
        do {
            file = try AtomicFile(replacing: destination.path)
        } catch {
            body.abandon()
            throw TrustHTTPClientError(.cannotCreateFile, "cannot create the download's file: \(error)", url: url, underlyingError: error)
        }
        var written: Int64 = 0
        let expected = headers[.contentEncoding] == nil ? headers[.contentLength].flatMap { Int64($0) } : nil
        do {
            if let expected, expected > limit { throw TrustHTTPClientError(ResponseLimit(.body, observed: Int(expected), limit: limit), url: url) }
            for try await chunk in body {
                guard written + Int64(chunk.readableBytes) <= Int64(limit) else {
                    throw TrustHTTPClientError(ResponseLimit(.body, observed: Int(written) + chunk.readableBytes, limit: limit), url: url)
                }
                do {
                    try file.write(chunk)
                } catch {
                    throw TrustHTTPClientError(.cannotWriteToFile, "cannot write the download's file: \(error)", url: url, underlyingError: error)
                }
                written += Int64(chunk.readableBytes)
                progress?(DownloadProgress(bytesWritten: written, expectedBytes: expected))
            }
            do {
                try file.commit()
            } catch {
                throw TrustHTTPClientError(.cannotWriteToFile, "cannot complete the download's file: \(error)", url: url, underlyingError: error)
            }
        } catch {
            body.abandon()
            file.discard()
            throw error
        }
        return TrustHTTPClientResponse(
            url: url, statusCode: statusCode, headers: headers, httpVersion: httpVersion, redirects: redirects,
            tlsVersion: tlsVersion, serverTrust: serverTrust)
    }
}

import Foundation
import Testing
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

@testable import TrustHTTP

@Suite("Streaming bodies: a slow reader bounds what is buffered", .serialized, .timeLimit(.minutes(5)), .paced)
struct BackpressureTests {
    @Test(arguments: [LabServer.Protocols.http1Only, .http2AndHTTP1])
    func slowReaderKeepsTheBufferBounded(_ protocols: LabServer.Protocols) async throws {
        try await withLabServers(["good"], protocols: protocols) { servers in
            let session = try labSession()
            try await withTeardown({ await session.shutdown() }) {
                let total = 40_000_000
                let response = try await session.bytes(for: TrustHTTPClientRequest(url: url(servers["good"]!, "/bytes/\(total)")))
                var iterator = response.body.makeAsyncIterator()
                var received = (try await iterator.next())?.readableBytes ?? 0
                // Stall: the server keeps sending, but the client stops reading from the socket.
                try await Task.sleep(for: .milliseconds(500))
                let buffered = response.body.bufferedBytes()
                #expect(buffered < 4 << 20, "buffered \(buffered) bytes while the reader stalled")
                while let chunk = try await iterator.next() { received += chunk.readableBytes }
                #expect(received == total)
            }
        }
    }

    /// A server that sends content after a response to HEAD — more than an HTTP/2 stream's window (65,535
    /// bytes) here — cannot stall the request: the content is not the response's (RFC 9110 §9.3.2), the
    /// client drops it as it comes and the stream ends. Then the connection still serves a GET. (The lab
    /// answers HEAD without content unless asked to misbehave, `head-content=1`.)
    @Test(arguments: [LabServer.Protocols.http1Only, .http2AndHTTP1])
    func contentAfterAHeadResponseCannotStallTheRequest(_ protocols: LabServer.Protocols) async throws {
        try await withLabServers(["good"], protocols: protocols) { servers in
            let session = try labSession()
            try await withTeardown({ await session.shutdown() }) {
                let target = url(servers["good"]!, "/bytes/300000?head-content=1")
                let head = try await session.data(for: TrustHTTPClientRequest(url: target, method: "HEAD"))
                #expect(head.statusCode == 200 && head.body.readableBytes == 0)
                #expect(head.headers[.contentLength] == "300000")
                #expect(head.httpVersion == (protocols == .http1Only ? .http1_1 : .http2))
                #expect(try await session.data(for: TrustHTTPClientRequest(url: target)).body.readableBytes == 300_000)
            }
        }
    }
}

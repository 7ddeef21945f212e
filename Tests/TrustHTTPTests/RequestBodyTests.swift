import Crypto
import Foundation
import NIOConcurrencyHelpers
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// Request bodies that stream (a sequence, a file) and `Expect: 100-continue`, over real TLS to the
/// lab's `/upload` route, which reports the bytes, SHA-256 and framing it received.
@Suite("Request bodies: streamed, from files, with Expect: 100-continue", .paced)
struct RequestBodyTests {
    /// `count` bytes of a repeating pattern, in `chunk`-byte pieces, from a sequence made anew per send;
    /// `made` counts the sends (the sequences made).
    static func patternBody(count: Int, chunk: Int = 64 * 1024, declared: Int?? = .none, made: NIOLockedValueBox<Int>? = nil) -> TrustHTTPClientRequest.Body {
        let length: Int? = declared ?? count
        return TrustHTTPClientRequest.Body.stream(length: length) {
            made?.withLockedValue { $0 += 1 }
            return AsyncStream<[UInt8]> { continuation in
                var sent = 0
                while sent < count {
                    let size = min(chunk, count - sent)
                    continuation.yield((sent..<sent + size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
                    sent += size
                }
                continuation.finish()
            }
        }
    }

    static func expectedReport(count: Int, framing: String, expect: String = "none") -> String {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let digest = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        return "bytes \(count)\nsha256 \(digest)\nframing \(framing)\nexpect \(expect)\n"
    }

    @Test(arguments: [HTTPVersionPreference.http1Only, .automatic])
    func streamsKnownAndUnknownLengths(_ version: HTTPVersionPreference) async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession(configure: { $0.httpVersion = version })
        let count = 3_000_001
        let known = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/upload"), method: "POST", body: Self.patternBody(count: count)))
        #expect(known.text == Self.expectedReport(count: count, framing: "content-length"))
        // No length: chunked over HTTP/1.1; over HTTP/2 the stream's end delimits it (NIO's HTTP/2
        // server codec then shows it to the application as chunked).
        let unknown = try await session.data(
            for: TrustHTTPClientRequest(url: url(server, "/upload"), method: "POST", body: Self.patternBody(count: count, declared: .some(nil))))
        #expect(unknown.text == Self.expectedReport(count: count, framing: "chunked"))
        #expect(unknown.httpVersion == (version == .http1Only ? .http1_1 : .http2))
        // The connection is reused after a streamed body sent in full.
        _ = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/upload"), method: "POST", body: Self.patternBody(count: 10)))
        #expect(session.openConnectionCount == 1)
        await session.shutdown()
        try await server.shutdown()
    }

    @Test func sendsFiles() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession()
        let folder = try temporaryDirectory()
        let path = folder + "/upload.bin"
        let count = 1_000_003
        try Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: path))
        let body = try TrustHTTPClientRequest.Body.file(URL(fileURLWithPath: path), chunkSize: 10_000)
        #expect(body.length == count && body.isStreamed)
        let response = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/upload"), method: "PUT", body: body))
        #expect(response.text == Self.expectedReport(count: count, framing: "content-length"))

        #expect { try TrustHTTPClientRequest.Body.file(URL(fileURLWithPath: folder + "/missing.bin")) } throws: {
            ($0 as? TrustHTTPClientError)?.code == .fileDoesNotExist
        }
        #expect { try TrustHTTPClientRequest.Body.file(URL(fileURLWithPath: folder)) } throws: { ($0 as? TrustHTTPClientError)?.code == .fileIsDirectory }

        // A file that shrinks after its length was read fails the request rather than send a short body.
        try Data(count: 10).write(to: URL(fileURLWithPath: path))
        do {
            _ = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/upload"), method: "PUT", body: body))
            Issue.record("a body shorter than its Content-Length was sent")
        } catch let error as TrustHTTPClientError {
            #expect(error.code == .requestBodyStreamExhausted, "\(error)")
            #expect(error.message.contains("after 10 of its declared \(count) bytes"), "\(error.message)")
        }
        await session.shutdown()
        try await server.shutdown()
    }

    struct SourceFailure: Error {}

    /// What an application's stream can get wrong — too few bytes, too many, an error — fails the
    /// request with `requestBodyStreamExhausted`; the server never answers an incomplete request, and
    /// the session goes on working.
    @Test(arguments: [HTTPVersionPreference.http1Only, .automatic])
    func brokenStreamsFailTheRequest(_ version: HTTPVersionPreference) async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession(configure: { $0.httpVersion = version })
        let throwing = TrustHTTPClientRequest.Body.stream(length: 100_000) {
            AsyncThrowingStream<[UInt8], any Error> { continuation in
                continuation.yield([UInt8](repeating: 1, count: 50_000))
                continuation.finish(throwing: SourceFailure())
            }
        }
        let cases: [(String, TrustHTTPClientRequest.Body, String)] = [
            ("short", Self.patternBody(count: 500, declared: .some(1000)), "after 500 of its declared 1000 bytes"),
            // The excess comes within the second chunk, before a complete request was on the wire.
            ("long", Self.patternBody(count: 1500, chunk: 600, declared: .some(1000)), "more than its declared length of 1000 bytes"),
            ("throwing", throwing, "the request body failed"),
        ]
        for (name, body, message) in cases {
            do {
                let response = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/upload"), method: "POST", body: body))
                Issue.record("\(name): answered \(response.statusCode): \(response.text)")
            } catch let error as TrustHTTPClientError {
                #expect(error.code == .requestBodyStreamExhausted, "\(name): \(error)")
                #expect(error.message.contains(message), "\(name): \(error.message)")
                if name == "throwing" { #expect(error.underlyingError is SourceFailure) }
            }
        }
        let after = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/upload"), method: "POST", body: Self.patternBody(count: 5)))
        #expect(after.text == Self.expectedReport(count: 5, framing: "content-length"))
        await session.shutdown()
        try await server.shutdown()
    }

    /// A session whose bodies wait for `100 Continue` far longer than any request may take.
    static func sessionThatWaitsForContinue(_ version: HTTPVersionPreference) throws -> TrustHTTPClient {
        try labSession(configure: {
            $0.httpVersion = version
            $0.continueTimeout = .seconds(600)
        })
    }

    /// The body waits for `100 Continue`: with a continue timeout longer than the request's own, the
    /// request succeeds only if the server's `100` released the body.
    @Test(arguments: [HTTPVersionPreference.http1Only, .automatic])
    func bodyWaitsForContinue(_ version: HTTPVersionPreference) async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try Self.sessionThatWaitsForContinue(version)
        let count = 200_000
        let response = try await session.data(
            for: TrustHTTPClientRequest(url: url(server, "/upload"), method: "POST", body: Self.patternBody(count: count), expectsContinue: true))
        #expect(response.text == Self.expectedReport(count: count, framing: "content-length", expect: "100-continue"))
        // A header field of the caller's own asks the same; bytes in memory wait too.
        var request = TrustHTTPClientRequest(url: url(server, "/upload"), method: "POST", headers: [.expect: "100-continue"], body: .text("in memory"))
        request.timeout = .seconds(30)
        let inMemory = try await session.data(for: request)
        #expect(inMemory.text.hasPrefix("bytes 9\n") && inMemory.text.hasSuffix("expect 100-continue\n"), "\(inMemory.text)")
        await session.shutdown()
        try await server.shutdown()
    }

    /// A server refuses before the body: the body is never made, the answer is the refusal, and the
    /// session's next request goes through.
    @Test(arguments: [HTTPVersionPreference.http1Only, .automatic])
    func refusalBeforeTheBodySavesIt(_ version: HTTPVersionPreference) async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try Self.sessionThatWaitsForContinue(version)
        let made = NIOLockedValueBox(0)
        let refused = try await session.data(
            for: TrustHTTPClientRequest(
                url: url(server, "/expect/refuse"), method: "POST", body: Self.patternBody(count: 5_000_000, made: made),
                expectsContinue: true))
        #expect(refused.statusCode == 413 && refused.text == "refused before the body\n")
        #expect(made.withLockedValue { $0 } == 0, "the body was made although the server refused it first")
        let next = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/upload"), method: "POST", body: Self.patternBody(count: 7)))
        #expect(next.text == Self.expectedReport(count: 7, framing: "content-length"))

        // 417 Expectation Failed: sent again without the expectation (RFC 9110 §10.1.1), the body made once.
        let retried = try await session.data(
            for: TrustHTTPClientRequest(
                url: url(server, "/expect/417"), method: "POST", body: Self.patternBody(count: 1234, made: made),
                expectsContinue: true))
        #expect(retried.statusCode == 200)
        #expect(retried.text == Self.expectedReport(count: 1234, framing: "content-length"))
        #expect(made.withLockedValue { $0 } == 1)
        await session.shutdown()
        try await server.shutdown()
    }

    /// A server that never answers the expectation gets the body after the continue timeout.
    @Test func silentServerGetsTheBodyAfterTheTimeout() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession(configure: { $0.continueTimeout = .milliseconds(100) })
        let response = try await session.data(
            for: TrustHTTPClientRequest(url: url(server, "/expect/ignore"), method: "POST", body: Self.patternBody(count: 70_000), expectsContinue: true))
        #expect(response.text == Self.expectedReport(count: 70_000, framing: "content-length", expect: "100-continue"))
        await session.shutdown()
        try await server.shutdown()
    }

    /// A streamed body is made again for each send: after a Digest challenge (the first send's body
    /// is spent) and after a 307 redirect. Digest `auth-int` would need the body hashed before it is
    /// sent: refused with a reason, never answered with the hash of nothing.
    @Test func streamedBodiesAreMadeAgainForEachSend() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession()
        let made = NIOLockedValueBox(0)
        let credential = Credential(user: "alice", password: "wonderland", persistence: .none)
        var digest = TrustHTTPClientRequest(
            url: url(server, "/digest?algorithm=SHA-256"), body: Self.patternBody(count: 100_000, made: made), credential: credential)
        digest.method = "POST"
        let answered = try await session.data(for: digest)
        #expect(answered.statusCode == 200, "\(answered.text)")
        #expect(made.withLockedValue { $0 } == 2)

        let target = url(server, "/upload").absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let redirected = try await session.data(
            for: TrustHTTPClientRequest(
                url: url(server, "/redirect?status=307&to=\(target)"), method: "POST",
                body: Self.patternBody(count: 4321, made: made)))
        #expect(redirected.text == Self.expectedReport(count: 4321, framing: "content-length"))
        #expect(made.withLockedValue { $0 } == 4)

        let authInt = TrustHTTPClientRequest(
            url: url(server, "/digest?qop=auth-int"), method: "POST", body: Self.patternBody(count: 10), credential: credential)
        do {
            let response = try await session.data(for: authInt)
            Issue.record("auth-int answered for a streamed body: \(response.statusCode)")
        } catch let error as TrustHTTPClientError {
            #expect(error.code == .userAuthenticationRequired && error.message.contains("auth-int"), "\(error)")
        }
        await session.shutdown()
        try await server.shutdown()
    }

    /// `TrustHTTPClientRequest.uploadProgress` hears of the body as the connection takes it: a streamed body chunk by
    /// chunk, counts rising to its length; bytes in memory once; over both protocols.
    @Test(arguments: [HTTPVersionPreference.http1Only, .automatic])
    func uploadProgressCountsTheBody(_ version: HTTPVersionPreference) async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession(configure: { $0.httpVersion = version })
        try await withTeardown({
            await session.shutdown()
            try? await server.shutdown()
        }) {
            let count = 1_000_001
            let seen = NIOLockedValueBox<[(Int, Int?)]>([])
            var streamed = TrustHTTPClientRequest(url: url(server, "/upload"), method: "PUT", body: Self.patternBody(count: count, chunk: 100_000))
            streamed.uploadProgress = { sent, expected in seen.withLockedValue { $0.append((sent, expected)) } }
            let response = try await session.data(for: streamed)
            #expect(response.text == Self.expectedReport(count: count, framing: "content-length"))
            let calls = seen.withLockedValue { $0 }
            #expect(calls.count == 11, "\(calls.map(\.0))")
            #expect(zip(calls, calls.dropFirst()).allSatisfy { $0.0 < $1.0 }, "\(calls.map(\.0))")
            #expect(calls.last?.0 == count && calls.allSatisfy { $0.1 == count })

            seen.withLockedValue { $0 = [] }
            var inMemory = TrustHTTPClientRequest(url: url(server, "/upload"), method: "POST", body: .bytes(Data(repeating: 1, count: 12_345)))
            inMemory.uploadProgress = { sent, expected in seen.withLockedValue { $0.append((sent, expected)) } }
            _ = try await session.data(for: inMemory)
            let once = seen.withLockedValue { $0 }
            #expect(once.count == 1 && once.first?.0 == 12_345 && once.first?.1 == 12_345, "\(once)")
        }
    }

    /// A streamed body that stops part of the way fails at the deadline with a message that says how
    /// far it got and what held it up: the body's source, or a peer that stopped taking bytes.
    @Test func stalledUploadsSayWhereTheyStopped() async throws {
        // The source yields 1000 of its declared 5000 bytes, then nothing. The connection is made
        // first, so that the request's 2 s go to the upload alone.
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession()
        try await withTeardown({
            await session.shutdown()
            try? await server.shutdown()
        }) {
            _ = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/")))
            let stuck = TrustHTTPClientRequest.Body.stream(length: 5000) {
                AsyncStream<[UInt8]> { continuation in continuation.yield([UInt8](repeating: 7, count: 1000)) }
            }
            var request = TrustHTTPClientRequest(url: url(server, "/upload"), method: "PUT", body: stuck)
            request.timeout = .seconds(2)
            let error = await sessionError { try await session.data(for: request) }
            #expect(error?.code == .timedOut, "\(String(describing: error))")
            #expect(error?.message.contains("the request body: 1000 of 5000 bytes sent (1 chunks); waiting") == true, "\(String(describing: error?.message))")
            #expect(error?.message.contains("for the body's source to yield more") == true, "\(String(describing: error?.message))")
        }

        // A server that never reads: the socket buffers fill, and the connection takes no more.
        // (The source makes each chunk as it is asked for.)
        let silent = try SilentPort()
        let plain = try labSession()
        try await withTeardown({
            await plain.shutdown()
            silent.close()
        }) {
            let endless = TrustHTTPClientRequest.Body.stream(length: nil) {
                AsyncStream<[UInt8]>(unfolding: { [UInt8](repeating: 1, count: 64 * 1024) })
            }
            var request = TrustHTTPClientRequest(url: try #require(URL(string: "http://127.0.0.1:\(silent.port)/upload")), method: "PUT", body: endless)
            request.timeout = .seconds(3)
            let error = await sessionError { try await plain.data(for: request) }
            #expect(error?.code == .timedOut, "\(String(describing: error))")
            #expect(error?.message.contains("for the connection to take more") == true, "\(String(describing: error?.message))")
            #expect(error?.message.contains("bytes sent") == true, "\(String(describing: error?.message))")
        }
    }
}

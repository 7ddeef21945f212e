import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// ``ResponseDecompression``: gzip and deflate bodies delivered decompressed over HTTP/1.1 and
/// HTTP/2, invalid data refused, and a zip bomb stopped by the ratio limit or the body limit.
@Suite("Decompression: gzip and deflate, corrupt data, zip bombs", .paced)
struct DecompressionTests {
    static func text(_ count: Int) -> [UInt8] {
        Array(String(repeating: "swift-trust lab text\n", count: count / 21 + 1).utf8.prefix(count))
    }

    @Test func checksumsMatchTheirStandardCheckValues() {
        #expect(LabGzip.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(LabGzip.zeroBombUnit.count == 13)
        #expect(LabGzip.gzip([]).count == 10 + 5 + 8)
    }

    @Test(arguments: [HTTPVersionPreference.http1Only, .automatic])
    func gzipAndDeflateAreDecompressed(_ version: HTTPVersionPreference) async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession(configure: {
            $0.decompression = .enabled()
            $0.httpVersion = version
        })
        for (path, count) in [("/gzip/100000", 100_000), ("/deflate/5000", 5_000), ("/gzip/0", 0), ("/gzip/200000", 200_000)] {
            let response = try await session.data(for: TrustHTTPClientRequest(url: URL(string: server.baseURL + path)!))
            #expect(response.statusCode == 200)
            #expect(Array(response.body.readableBytesView) == Self.text(count), "\(path)")
            #expect(response.httpVersion == (version == .http1Only ? .http1_1 : .http2))
        }
        // The request asked for it.
        let headers = try await session.data(for: TrustHTTPClientRequest(url: URL(string: server.baseURL + "/headers")!))
        #expect(headers.text.contains("accept-encoding: deflate, gzip"), "\(headers.text)")
        await session.shutdown()
        try await server.shutdown()
    }

    @Test func disabledByDefaultTheBodyIsAsSent() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession()
        let response = try await session.data(for: TrustHTTPClientRequest(url: URL(string: server.baseURL + "/gzip/1000")!))
        #expect(Array(response.body.readableBytesView) == LabGzip.gzip(Self.text(1000)))
        let headers = try await session.data(for: TrustHTTPClientRequest(url: URL(string: server.baseURL + "/headers")!))
        #expect(!headers.text.contains("accept-encoding"))
        await session.shutdown()
        try await server.shutdown()
    }

    @Test func corruptDataIsCannotDecodeContentData() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let good = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession { $0.decompression = .enabled() }
        let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: URL(string: server.baseURL + "/gzip-corrupt")!)) }
        #expect(error?.code == .cannotDecodeContentData, "\(String(describing: error))")
        await expectUsable(session, good)
        await session.shutdown()
        try await server.shutdown()
        try await good.shutdown()
    }

    /// A gzip stream of zeros without end: refused by the ratio limit at once (streaming or not),
    /// and with a ratio limit it never reaches, by the body limit on the decompressed bytes.
    @Test func zipBombIsStoppedByTheRatioOrTheBodyLimit() async throws {
        let bomb = try await LabHostileServer.startWithGoodCertificate(.zipBomb)
        let session = try labSession { $0.decompression = .enabled() }
        let url = bomb.url(path: "/")
        let clock = ContinuousClock()
        var start = clock.now
        let byRatio = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url)) }
        print("[decompression] zip bomb, ratio 100: \(String(describing: byRatio?.limit)) in \(start.duration(to: clock.now))")
        #expect(byRatio?.code == .responseTooLarge)
        #expect(byRatio?.limit?.kind == .decompressionRatio)
        #expect(byRatio?.limit?.limit == 100)

        start = clock.now
        let streamed = await sessionError {
            let response = try await session.bytes(for: TrustHTTPClientRequest(url: url))
            for try await _ in response.body {}
            return try await session.data(for: TrustHTTPClientRequest(url: url))
        }
        #expect(streamed?.limit?.kind == .decompressionRatio, "\(String(describing: streamed))")

        let lenient = try labSession(configure: {
            $0.decompression = .enabled(maximumRatio: 1000)
            $0.responseLimits.maximumBodySize = 8 << 20
        })
        start = clock.now
        let byBody = await sessionError { try await lenient.data(for: TrustHTTPClientRequest(url: url)) }
        print("[decompression] zip bomb, ratio 1000, body limit 8 MiB: \(String(describing: byBody?.limit)) in \(start.duration(to: clock.now))")
        #expect(byBody?.limit?.kind == .body, "\(String(describing: byBody))")
        #expect(start.duration(to: clock.now) < .seconds(20))
        await session.shutdown()
        await lenient.shutdown()
        await bomb.shutdown()
    }
}

import Foundation
import NIOConcurrencyHelpers
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// `TrustHTTPClient.download(for:to:progress:)`: the body written to a file as it arrives, renamed into place
/// once complete; a failure of any kind leaves the destination as it was and no temporary file.
@Suite("Downloads: streamed to a file, whole or not at all, with progress", .paced)
struct DownloadTests {
    /// The folder's entries other than `kept`: a temporary file left behind shows here.
    static func leftovers(_ folder: String, kept: Set<String> = []) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { !kept.contains($0) }
    }

    @Test(arguments: [HTTPVersionPreference.http1Only, .automatic])
    func downloadsWithProgress(_ version: HTTPVersionPreference) async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        let session = try labSession(configure: { $0.httpVersion = version })
        let folder = try temporaryDirectory()
        let destination = URL(fileURLWithPath: folder + "/body.bin")
        try Data("an older file".utf8).write(to: destination)
        let reports = NIOLockedValueBox<[DownloadProgress]>([])
        let count = 3_000_000
        let response = try await session.download(for: TrustHTTPClientRequest(url: url(server, "/bytes/\(count)")), to: destination) { progress in
            reports.withLockedValue { $0.append(progress) }
        }
        #expect(response.statusCode == 200 && response.body.readableBytes == 0)
        let written = try Data(contentsOf: destination)
        let expected = try await session.data(for: TrustHTTPClientRequest(url: url(server, "/bytes/\(count)"))).data
        #expect(written.count == count && written == expected)
        let seen = reports.withLockedValue { $0 }
        #expect(seen.count > 1, "progress was reported \(seen.count) times")
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.bytesWritten < $1.bytesWritten })
        #expect(seen.last == DownloadProgress(bytesWritten: Int64(count), expectedBytes: Int64(count)))
        #expect(seen.last?.fractionCompleted == 1)
        #expect(try Self.leftovers(folder) == ["body.bin"])
        await session.shutdown()
        try await server.shutdown()
    }

    /// A body that stalls (the read timeout fires), one over the request's limit, a folder that does not
    /// exist: each a typed error, the old file untouched, nothing left behind.
    @Test func failuresLeaveNothing() async throws {
        let good = try #require(Lab.pki.servers["good"])
        let stalling = try await LabHostileServer.start(.stallAfterHead, host: "good.lab.test", chain: good.chain, privateKey: good.privateKey)
        let server = try await LabServer.start("good", pki: Lab.pki)
        // Only the stall gets the 1 s read timeout: under the parallel suite, a healthy request on a loaded
        // machine can wait that long too.
        let stallSession = try labSession(configure: { $0.readTimeout = .seconds(1) })
        let session = try labSession()
        let folder = try temporaryDirectory()
        let destination = URL(fileURLWithPath: folder + "/kept.txt")
        try Data("the previous version".utf8).write(to: destination)

        do {
            _ = try await stallSession.download(for: TrustHTTPClientRequest(url: stalling.url(path: "/")), to: destination)
            Issue.record("a stalled body was downloaded")
        } catch let error as TrustHTTPClientError {
            #expect(error.code == .timedOut, "\(error)")
        }
        var limited = TrustHTTPClientRequest(url: url(server, "/bytes/200000"))
        limited.maximumResponseBodySize = 100_000
        do {
            _ = try await session.download(for: limited, to: destination)
            Issue.record("a body over the request's limit was downloaded")
        } catch let error as TrustHTTPClientError {
            #expect(error.code == .responseTooLarge && error.limit?.limit == 100_000, "\(error)")
        }
        #expect(try String(contentsOf: destination, encoding: .utf8) == "the previous version")
        #expect(try Self.leftovers(folder) == ["kept.txt"])

        do {
            _ = try await session.download(for: TrustHTTPClientRequest(url: url(server, "/")), to: URL(fileURLWithPath: folder + "/missing/x.txt"))
            Issue.record("a file was created in a folder that does not exist")
        } catch let error as TrustHTTPClientError {
            #expect(error.code == .cannotCreateFile, "\(error)")
        }
        // The session is still usable after each failure.
        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server, "/"))).statusCode == 200)
        await session.shutdown()
        await stallSession.shutdown()
        await stalling.shutdown()
        try await server.shutdown()
    }

    /// A download cancelled mid-body: no file, no temporary file.
    @Test func cancellationLeavesNothing() async throws {
        let good = try #require(Lab.pki.servers["good"])
        let trickling = try await LabHostileServer.start(.trickleBody, host: "good.lab.test", chain: good.chain, privateKey: good.privateKey)
        let session = try labSession()
        let folder = try temporaryDirectory()
        let destination = URL(fileURLWithPath: folder + "/partial.bin")
        let started = NIOLockedValueBox(false)
        let task = Task {
            try await session.download(for: TrustHTTPClientRequest(url: trickling.url(path: "/")), to: destination) { _ in started.withLockedValue { $0 = true }
            }
        }
        while !started.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(20)) }
        task.cancel()
        // Ended by the cancellation, not by the request timeout a trickle would reach otherwise.
        switch await task.result {
        case .success:
            Issue.record("a trickled download completed")
        case .failure(let error):
            let cancelled = (error as? TrustHTTPClientError)?.code == .cancelled || error is CancellationError
            #expect(cancelled, "the download did not end by its cancellation: \(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(try Self.leftovers(folder).isEmpty)
        await session.shutdown()
        await trickling.shutdown()
    }
}

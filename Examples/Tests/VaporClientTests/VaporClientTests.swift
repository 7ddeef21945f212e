import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Testing
import Trust
import TrustHTTP
import TrustLab
import TrustVapor
import Vapor
import VaporPinnedClient

/// One lab PKI per test process (key generation is the slow part), and the pins a client of its `good`
/// server would use.
enum VaporLab {
    static let pki: LabPKI = {
        do { return try LabPKI.make() } catch { fatalError("cannot make the lab PKI: \(error)") }
    }()

    /// `good`'s issuing CA: on every path the lab's `good` server presents.
    static var rightPin: SPKIPin { pki.intermediate.certificate.spkiPin }
    /// A key on no path of `good`'s (the lab's other root).
    static var wrongPin: SPKIPin { pki.otherRoot.certificate.spkiPin }

    /// A session configuration pinned to `pin`, trusting the lab roots, reaching the lab's names on 127.0.0.1.
    static func configuration(pin: SPKIPin) throws -> TrustHTTPClientConfiguration {
        var configuration = try VaporPinnedClient.clientConfiguration(pins: [pin], anchors: .only(pki.trustedRoots))
        configuration.resolve = LabPKI.loopbackResolve
        configuration.requestTimeout = .seconds(30)
        return configuration
    }
}

/// A Vapor application (testing environment) listening on a free loopback port; `stop` shuts it down.
struct RunningApplication {
    let application: Application
    let port: Int

    static func start(_ configure: (Application) throws -> Void) async throws -> RunningApplication {
        let application = try await Application.make(.testing)
        do {
            try configure(application)
            try await application.server.start(address: .hostname("127.0.0.1", port: 0))
            guard let port = application.http.server.shared.localAddress?.port else { throw TrustHTTPClientError(.cannotConnectToHost, "no local port") }
            return RunningApplication(application: application, port: port)
        } catch {
            await application.server.shutdown()
            try? await application.asyncShutdown()
            throw error
        }
    }

    /// `GET path` on the application, over plain HTTP on loopback.
    func get(_ path: String) async throws -> TrustHTTPClientResponse {
        let url = try #require(URL(string: "http://127.0.0.1:\(port)\(path)"))
        let session = try TrustHTTPClient(configuration: TrustHTTPClientConfiguration())
        let result = await Result { try await session.data(for: TrustHTTPClientRequest(url: url)) }
        await session.shutdown()
        return try result.get()
    }

    func stop() async {
        await application.server.shutdown()
        try? await application.asyncShutdown()
    }
}

/// Log records kept in memory, for the assertions on what the client logs.
final class LogRecords: Sendable {
    struct Record: Sendable {
        let message: String
        let metadata: Logger.Metadata
    }

    private let records = NIOLockedValueBox<[Record]>([])
    var all: [Record] { records.withLockedValue { $0 } }

    func handler(label: String) -> any LogHandler { Handler(records: self) }

    fileprivate func append(_ record: Record) { records.withLockedValue { $0.append(record) } }

    private struct Handler: LogHandler {
        let records: LogRecords
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            records.append(Record(message: "\(event.message)", metadata: metadata.merging(event.metadata ?? [:]) { $1 }))
        }
    }
}

@Suite("Vapor's Client through a TrustHTTPClient (TrustVapor)", .timeLimit(.minutes(5)))
struct VaporClientTests {
    @Test func routeCallingThePinnedUpstreamSucceedsWithTheRightPin() async throws {
        let upstream = try await LabServer.start("good", pki: VaporLab.pki)
        let url = try #require(URL(string: upstream.baseURL + "/"))
        let configuration = try VaporLab.configuration(pin: VaporLab.rightPin)
        let app = try await RunningApplication.start { VaporPinnedClient.configure($0, client: configuration, upstream: url) }
        let answer = await Result { try await app.get("/upstream") }
        await app.stop()
        try await upstream.shutdown()
        let response = try answer.get()
        #expect(response.statusCode == 200, "\(response.text)")
        #expect(response.text == "upstream 200: hello from good\n")
    }

    /// `req.client` is the TrustHTTPVaporClient: a route reaches its TrustHTTPClient to stream a large body through.
    @Test func routeStreamsTheUpstreamBodyThroughTheTrustHTTPClient() async throws {
        let upstream = try await LabServer.start("good", pki: VaporLab.pki)
        let url = try #require(URL(string: upstream.baseURL + "/bytes/300000"))
        let configuration = try VaporLab.configuration(pin: VaporLab.rightPin)
        let app = try await RunningApplication.start { VaporPinnedClient.configure($0, client: configuration, upstream: url) }
        let answer = await Result { try await app.get("/upstream/stream") }
        await app.stop()
        try await upstream.shutdown()
        let response = try answer.get()
        #expect(response.statusCode == 200)
        #expect(response.body.readableBytes == 300_000)
    }

    /// Outside any request: the boot check's status with the right pin, the refusal's codes with the wrong one.
    @Test func bootCheckOutsideARequest() async throws {
        let upstream = try await LabServer.start("good", pki: VaporLab.pki)
        let url = try #require(URL(string: upstream.baseURL + "/"))
        let app = try await Application.make(.testing)
        let right = try TrustHTTPClient(configuration: VaporLab.configuration(pin: VaporLab.rightPin))
        let wrong = try TrustHTTPClient(configuration: VaporLab.configuration(pin: VaporLab.wrongPin))
        let passed = await VaporPinnedClient.checkUpstream(url, client: right, app: app)
        let refused = await VaporPinnedClient.checkUpstream(url, client: wrong, app: app)
        await right.shutdown()
        await wrong.shutdown()
        try? await app.asyncShutdown()
        try await upstream.shutdown()
        #expect(passed == "200")
        #expect(refused == "pin-mismatch")
    }

    @Test func routeCallingThePinnedUpstreamFailsWithTheReasonWithTheWrongPin() async throws {
        let upstream = try await LabServer.start("good", pki: VaporLab.pki)
        let url = try #require(URL(string: upstream.baseURL + "/"))
        let configuration = try VaporLab.configuration(pin: VaporLab.wrongPin)
        let app = try await RunningApplication.start { VaporPinnedClient.configure($0, client: configuration, upstream: url) }
        let answer = await Result { try await app.get("/upstream") }
        // The error the route switched on, as `req.client` gives it: a TrustHTTPClientError with the refused decision.
        let direct = await Result { try await app.application.client.get(URI(string: url.absoluteString)) }
        await app.stop()
        try await upstream.shutdown()
        let response = try answer.get()
        #expect(response.statusCode == 502, "\(response.text)")
        #expect(response.text == "upstream refused: pin-mismatch\n")
        guard case .failure(let failure) = direct, let error = failure as? TrustHTTPClientError else {
            Issue.record("the wrong pin was accepted, or the failure is not a SessionError: \(direct)")
            return
        }
        #expect(error.code == .serverCertificateUntrusted, "\(error)")
        let decision = try #require(error.trustDecision)
        #expect(!decision.isTrusted)
        #expect(decision.reasons.contains { $0.kind == .pinMismatch }, "\(decision.reasons)")
    }

    @Test func requestHeadersGoOutAndTheResponseComesBackMapped() async throws {
        try await withPinnedClient { client, base in
            var headers = HTTPHeaders()
            headers.add(name: "X-Trace", value: "abc-123")
            let response = try await client.get(URI(string: base + "/headers"), headers: headers)
            #expect(response.status == .ok)
            #expect(response.headers.first(name: "content-type") == "text/plain; charset=utf-8")
            let text = try #require(response.body.map { String(buffer: $0) })
            #expect(text.contains("x-trace: abc-123\n"), "\(text)")
            // The session's own fields are there too; Vapor's content helpers read the body.
            #expect(text.contains("user-agent: swift-trust\n"), "\(text)")
            #expect(try response.content.decode(String.self) == text)
        }
    }

    @Test func statusIsMappedAndAnEmptyBodyIsNone() async throws {
        try await withPinnedClient { client, base in
            let teapot = try await client.get(URI(string: base + "/status/418"))
            #expect(teapot.status == .imATeapot)
            #expect(teapot.status.code == 418)
            #expect(teapot.body.map { String(buffer: $0) } == "status 418\n")
            let head = try await client.send(.HEAD, to: URI(string: base + "/"))
            #expect(head.status == .ok)
            #expect(head.body == nil)
        }
    }

    @Test func postSendsItsBody() async throws {
        try await withPinnedClient { client, base in
            let response = try await client.post(URI(string: base + "/echo")) { request in
                request.body = ByteBuffer(string: "ping from vapor")
                request.headers.contentType = .plainText
            }
            #expect(response.status == .ok)
            #expect(response.body.map { String(buffer: $0) } == "POST\nping from vapor")
            let upload = try await client.post(URI(string: base + "/upload")) { $0.body = ByteBuffer(string: "12345") }
            #expect(upload.body.map { String(buffer: $0) }?.contains("bytes 5\n") == true, "\(upload)")
        }
    }

    @Test func theRequestTimeoutBoundsTheExchange() async throws {
        try await withPinnedClient { client, base in
            // The server answers after 30 s; the request allows 200 ms.
            let request = ClientRequest(method: .GET, url: URI(string: base + "/slow?ms=30000"), timeout: .milliseconds(200))
            let result = await Result { try await client.send(request) }
            guard case .failure(let failure) = result, let error = failure as? TrustHTTPClientError else {
                Issue.record("no timeout: \(result)")
                return
            }
            #expect(error.code == .timedOut, "\(error)")
        }
    }

    @Test func aURIThatIsNoHTTPURLIsRefusedBeforeAnythingIsSent() async throws {
        try await withPinnedClient { client, _ in
            let result = await Result { try await client.get("/relative/only") }
            guard case .failure(let failure) = result, let error = failure as? TrustHTTPClientError else {
                Issue.record("a relative URI was sent: \(result)")
                return
            }
            #expect(error.code == .unsupportedURL || error.code == .badURL, "\(error)")
        }
    }

    @Test func delegatedFuturesCompleteOnTheGivenEventLoop() async throws {
        try await withPinnedClient { client, base in
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let delegated = client.delegating(to: loop)
            #expect(delegated.eventLoop === loop)
            let onLoop = try await delegated.send(ClientRequest(url: URI(string: base + "/"))).map { _ in loop.inEventLoop }.get()
            #expect(onLoop)
        }
    }

    @Test func reqClientLogsToTheRequestsLogger() async throws {
        let records = LogRecords()
        let upstream = try await LabServer.start("good", pki: VaporLab.pki)
        let url = try #require(URL(string: upstream.baseURL + "/"))
        let configuration = try VaporLab.configuration(pin: VaporLab.rightPin)
        let app = try await RunningApplication.start { application in
            application.logger = Logger(label: "vapor-client-tests") { records.handler(label: $0) }
            application.logger.logLevel = .debug
            VaporPinnedClient.configure(application, client: configuration, upstream: url)
        }
        let answer = await Result { try await app.get("/upstream") }
        await app.stop()
        try await upstream.shutdown()
        #expect(try answer.get().statusCode == 200)
        let lines = records.all.filter { $0.message == "client request" || $0.message == "client response" }
        #expect(lines.count == 2, "\(records.all.map(\.message))")
        for line in lines {
            // The request's logger: Vapor's request-id is on the line, with the host and no path.
            #expect(line.metadata["request-id"] != nil, "\(line.metadata)")
            #expect(line.metadata["http.host"] == "good.lab.test")
        }
        #expect(lines.last?.metadata["http.status"] == "200")
    }

    @Test func theApplicationShutsItsSessionDown() async throws {
        let upstream = try await LabServer.start("good", pki: VaporLab.pki)
        let url = try #require(URL(string: upstream.baseURL + "/"))
        let session = try TrustHTTPClient(configuration: try VaporLab.configuration(pin: VaporLab.rightPin))
        let application = try await Application.make(.testing)
        application.clients.use(.trustHTTP(session))
        let first = await Result { try await application.client.get(URI(string: url.absoluteString)) }
        let openBefore = session.openConnectionCount
        try await application.asyncShutdown()
        let after = await Result { try await session.data(for: TrustHTTPClientRequest(url: url)) }
        try await upstream.shutdown()
        #expect(try first.get().status == .ok)
        #expect(openBefore == 1)
        #expect(session.openConnectionCount == 0)
        guard case .failure(let failure) = after else {
            Issue.record("the session still sends after the application shut down")
            return
        }
        #expect(failure is TrustHTTPClientError, "\(failure)")
    }

    /// Runs `body` with `app.client` of an application registered with `.trustHTTP(…)` pinned to the lab's
    /// issuing CA, and the base URL of a lab `good` server (HTTP/2 and HTTP/1.1).
    private func withPinnedClient(_ body: (any Client, String) async throws -> Void) async throws {
        let upstream = try await LabServer.start("good", pki: VaporLab.pki)
        let application = try await Application.make(.testing)
        application.clients.use(.trustHTTP(try VaporLab.configuration(pin: VaporLab.rightPin)))
        let outcome = await Result { try await body(application.client, upstream.baseURL) }
        try? await application.asyncShutdown()
        try await upstream.shutdown()
        try outcome.get()
    }
}

extension Result where Failure == any Error {
    /// The result of `body`.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

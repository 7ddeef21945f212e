import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

@testable import TrustHTTP

/// What a `TrustHTTPClient` does against `LabHostileServer`: every attack ends one request with its typed
/// error, within its deadline, and the same session then serves a normal request. Times are printed
/// (`[hostile] …`); the assertions on them are loose (this 2-core machine runs suites in parallel),
/// the figures are what the closing note reports. Serialized: a flood saturates a core, and 25 of
/// them at once would only measure the machine.
@Suite("Hostile servers: every resource bounded, every deadline kept", .serialized, .timeLimit(.minutes(5)), .paced)
struct HostileServerTests {
    static let good = Lab.pki.servers["good"]!

    /// The deadlines a case that waits for one runs under (the others run under 20 s, far from
    /// anything they should take).
    static let requestTimeout = Duration.seconds(2)
    static let readTimeout = Duration.seconds(1)

    /// What a case must end with.
    enum Outcome: Sendable, CustomStringConvertible {
        case code(TrustHTTPClientError.Code)
        case limit(ResponseLimit.Kind)
        /// Any of these codes (HTTP/2 attacks NIO may detect as one rule or another).
        case oneOf([TrustHTTPClientError.Code])

        var description: String {
            switch self {
            case .code(let code): "\(code)"
            case .limit(let kind): "responseTooLarge(\(kind.rawValue))"
            case .oneOf(let codes): codes.map(\.description).joined(separator: "|")
            }
        }

        func matches(_ error: TrustHTTPClientError?) -> Bool {
            guard let error else { return false }
            switch self {
            case .code(let code): return error.code == code
            case .limit(let kind): return error.code == .responseTooLarge && (error.limit == nil || error.limit?.kind == kind)
            case .oneOf(let codes): return codes.contains(error.code)
            }
        }
    }

    /// Each behaviour with what `data(for:)` must end with and the deadline that bounds it
    /// (nil: it must fail fast, well before any deadline).
    static let cases: [(LabHostileServer.Behaviour, Outcome, Duration?)] = [
        (.endlessChunkedBody, .limit(.body), nil),
        (.endlessBody, .limit(.body), nil),
        (.trickleHead, .code(.timedOut), requestTimeout),  // bytes keep coming: the read timeout never fires
        (.trickleBody, .code(.timedOut), requestTimeout),
        (.stallAfterHead, .code(.timedOut), readTimeout),
        (.hugeHead, .limit(.headSize), nil),
        (.manyHeaderFields, .limit(.headerFields), nil),
        (.longHeaderField, .limit(.headerFieldSize), nil),
        (.manyInformational, .limit(.informationalResponses), nil),
        (.redirectToFile, .code(.unsupportedURL), nil),
        (.redirectToFTP, .code(.unsupportedURL), nil),
        (.redirectToData, .code(.unsupportedURL), nil),
        (.redirectLoop, .code(.httpTooManyRedirects), nil),
        (.bareCRInHeader, .code(.badServerResponse), nil),
        (.bareLFInHeaderValue, .code(.badServerResponse), nil),
        (.nulInHeader, .code(.badServerResponse), nil),
        (.settingsFlood, .code(.badServerResponse), nil),
        (.pingFlood, .code(.badServerResponse), nil),
        (.windowUpdateFlood, .code(.badServerResponse), nil),
        // The stream ends before the connection's violation is recorded; the TrustHTTPClient waits for it
        // (Connection.settledViolation), so the rule broken is named.
        (.resetStreamFlood, .oneOf([.badServerResponse]), nil),
        (.endlessContinuation, .limit(.headSize), nil),
        (.hugeHeaderTable, .oneOf([.badServerResponse, .responseTooLarge]), nil),
        (.goAwayLoop, .code(.badServerResponse), nil),
        (.endlessData, .limit(.body), nil),
        (.endlessDataIgnoringFlowControl, .oneOf([.badServerResponse]), nil),
    ]

    static func session(deadline: Duration?, _ configure: (inout TrustHTTPClientConfiguration) -> Void = { _ in }) throws -> TrustHTTPClient {
        try labSession { configuration in
            configuration.requestTimeout = .seconds(20)  // a case's request deadline is set on its request
            configuration.readTimeout = deadline == readTimeout ? readTimeout : .seconds(20)
            configuration.responseLimits.maximumBodySize = 1 << 20
            // 127.0.0.1 as well as good.lab.test (the redirect loop alternates them): both are on the lab certificate.
            configure(&configuration)
        }
    }

    @Test(arguments: cases.map(\.0))
    func dataForEndsTyped(_ behaviour: LabHostileServer.Behaviour) async throws {
        guard let (_, outcome, deadline) = Self.cases.first(where: { $0.0 == behaviour }) else { return }
        let server = try await LabHostileServer.start(behaviour, host: "good.lab.test", chain: Self.good.chain, privateKey: Self.good.privateKey)
        let good = try await LabServer.start("good", pki: Lab.pki, protocols: behaviour.isHTTP2 ? .http2Only : .http1Only)
        // DATA beyond flow control: the body limit must not end it first (the stream window is 256 KiB and
        // grows as the body is read; the violation shows once the server runs past what was granted).
        let session = try Self.session(deadline: deadline) {
            if behaviour == .endlessDataIgnoringFlowControl { $0.responseLimits.maximumBodySize = 256 << 20 }
        }
        let request = TrustHTTPClientRequest(url: server.url(path: "/"), timeout: deadline == Self.requestTimeout ? Self.requestTimeout : nil)
        let failure = await timedFailure { try await session.data(for: request) }
        let milliseconds = failure.elapsed.components.seconds * 1000 + failure.elapsed.components.attoseconds / 1_000_000_000_000_000
        print(
            "[hostile] data(for:) \(behaviour.rawValue) → \(failure.error.map { "\($0.code) \($0.message)" } ?? "no error") in \(milliseconds) ms"
                + (deadline.map { " (deadline \($0))" } ?? ""))
        #expect(outcome.matches(failure.error), "\(behaviour.rawValue): expected \(outcome), got \(String(describing: failure.error))")
        if let error = failure.error, error.code == .badServerResponse {
            #expect(error.protocolViolation == (behaviour.isHTTP2 ? .http2 : .malformedHTTP1Response), "\(behaviour.rawValue): \(error)")
        }
        // Loose bounds (parallel suites on 2 cores): a missed deadline shows as tens of seconds (the
        // session's own are 20 s); measured alone, every case ends within 250 ms of its deadline, or
        // in well under 1 s — the printed figures.
        #expect(failure.elapsed < (deadline.map { $0 + .seconds(10) } ?? .seconds(15)), "\(behaviour.rawValue) took \(failure.elapsed)")
        await expectUsable(session, good)
        await session.shutdown()
        await server.shutdown()
        try await good.shutdown()
    }

    /// Streaming keeps its backpressure and its deadlines: an endless body read slowly holds about
    /// 1 MiB; the resource timeout ends it; a stalled streamed body ends at the read timeout.
    @Test(arguments: [LabHostileServer.Behaviour.endlessChunkedBody, .endlessData, .trickleBody, .stallAfterHead])
    func streamingEndsAtItsDeadline(_ behaviour: LabHostileServer.Behaviour) async throws {
        let server = try await LabHostileServer.start(behaviour, host: "good.lab.test", chain: Self.good.chain, privateKey: Self.good.privateKey)
        let session = try Self.session(deadline: behaviour == .stallAfterHead ? Self.readTimeout : nil) { $0.resourceTimeout = .seconds(2) }
        let clock = ContinuousClock()
        let start = clock.now
        var received = 0
        var failure: TrustHTTPClientError?
        var buffered = 0
        do {
            let response = try await session.bytes(for: TrustHTTPClientRequest(url: server.url(path: "/")))
            for try await chunk in response.body {
                received += chunk.readableBytes
                buffered = max(buffered, response.body.bufferedBytes())
                try await Task.sleep(for: .milliseconds(5))  // a slow reader
            }
        } catch let error as TrustHTTPClientError {
            failure = error
        }
        let elapsed = start.duration(to: clock.now)
        print(
            "[hostile] bytes(for:) \(behaviour.rawValue) → \(failure.map { "\($0.code) \($0.message)" } ?? "no error") after \(received) bytes in \(elapsed); most buffered \(buffered)"
        )
        #expect(failure?.code == .timedOut)
        #expect(elapsed < .seconds(15))
        #expect(buffered <= 1 << 20, "backpressure holds the unread part near 256 KiB")
        await session.shutdown()
        await server.shutdown()
    }

    /// A proxy whose CONNECT reply never ends its head is refused at the head limit, typed as the proxy's.
    @Test func hugeConnectReplyIsBounded() async throws {
        let proxy = try await LabHostileServer.startPlain(.hugeConnectReply)
        let session = try Self.session(deadline: nil) { $0.proxy = ProxyConfiguration(host: "127.0.0.1", port: proxy.port) }
        let failure = await timedFailure { try await session.data(for: TrustHTTPClientRequest(url: URL(string: "https://good.lab.test:1/")!)) }
        report("huge CONNECT reply", failure)
        #expect(failure.error?.code == .responseTooLarge)
        #expect(failure.error?.limit?.fromProxy == true)
        #expect(failure.error?.limit?.kind == .headSize)
        await session.shutdown()
        await proxy.shutdown()
    }
}

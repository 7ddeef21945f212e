import Foundation
import NIOConcurrencyHelpers
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport
import X509

@Suite("Session: HTTPS with trust evaluated in the handshake", .serialized, .timeLimit(.minutes(5)), .paced)
struct SessionTests {
    @Test(arguments: [LabServer.Protocols.http1Only, .http2AndHTTP1])
    func goodServerOverHTTP1AndHTTP2(_ protocols: LabServer.Protocols) async throws {
        try await withLabServers(["good"], protocols: protocols) { servers in
            let session = try labSession()
            try await withTeardown({ await session.shutdown() }) {
                let response = try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!)))
                #expect(response.statusCode == 200)
                #expect(response.text == "hello from good\n")
                #expect(response.httpVersion == (protocols == .http1Only ? .http1_1 : .http2))
            }
        }
    }

    /// A server going away (GET /close: a GOAWAY naming the current stream as the last, then the
    /// connection ends): a concurrent GET that was sent on the same HTTP/2 connection is never seen
    /// by the server, and the session retries it once on a new connection instead of failing it.
    /// Over HTTP/1.1 the same route answers `connection: close` and the next request reconnects.
    @Test(arguments: [LabServer.Protocols.http1Only, .http2AndHTTP1])
    func serverEndingTheConnectionDoesNotFailRequests(_ protocols: LabServer.Protocols) async throws {
        try await withLabServers(["good"], protocols: protocols) { servers in
            let session = try labSession()
            try await withTeardown({ await session.shutdown() }) {
                let base = url(servers["good"]!)
                for _ in 0..<25 {
                    try await withThrowingTaskGroup(of: Int.self) { group in
                        group.addTask { try await session.data(for: TrustHTTPClientRequest(url: base.appendingPathComponent("close"))).statusCode }
                        group.addTask { try await session.data(for: TrustHTTPClientRequest(url: base)).statusCode }
                        for try await status in group { #expect(status == 200) }
                    }
                }
                #expect(try await session.data(for: TrustHTTPClientRequest(url: base)).text == "hello from good\n")
            }
        }
    }

    /// Every lab configuration gives the expected outcome and error code under the default policy (lab roots as anchors).
    @Test func everyLabConfigurationGivesItsError() async throws {
        let expectations: [(String, TrustHTTPClientError.Code?, String?)] = [
            ("good", nil, nil),
            ("expired", .serverCertificateHasBadDate, "expired"),
            ("not-yet-valid", .serverCertificateNotYetValid, "not-yet-valid"),
            ("wrong-host", .serverCertificateUntrusted, "name-mismatch"),
            ("self-signed", .serverCertificateHasUnknownRoot, "no-path-to-trusted-anchor"),
            ("untrusted-root", .serverCertificateHasUnknownRoot, "no-path-to-trusted-anchor"),
            ("incomplete-chain", .serverCertificateHasUnknownRoot, "no-path-to-trusted-anchor"),
            ("no-san", .serverCertificateUntrusted, "missing-subject-alt-name"),
            ("client-auth-only", .serverCertificateUntrusted, "missing-extended-key-usage"),
            ("mitm", nil, nil),  // a genuine chain from another trusted CA: only pinning refuses it
        ]
        try await withLabServers(expectations.map(\.0)) { servers in
            let session = try labSession()
            try await withTeardown({ await session.shutdown() }) { () async throws in
                for (name, code, reason) in expectations {
                    guard let server = servers[name] else { continue }
                    if let code {
                        let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(server))) }
                        #expect(error?.code == code, "\(name): \(String(describing: error))")
                        #expect(error?.trustDecision?.reasons.first?.code == reason, "\(name)")
                        #expect(error?.trustDecision?.presentedChain.count == Lab.chain(name).count, "\(name)")
                    } else {
                        #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server))).statusCode == 200, "\(name)")
                    }
                }
            }
        }
    }

    @Test func ipOnlyCertificateOverAnIPURL() async throws {
        try await withLabServers(["ip-only"]) { servers in
            let session = try labSession()
            try await withTeardown({ await session.shutdown() }) {
                let response = try await session.data(for: TrustHTTPClientRequest(url: URL(string: "https://127.0.0.1:\(servers["ip-only"]!.port)/")!))
                #expect(response.statusCode == 200)
            }
        }
    }

    /// The pinned-certificate append attack fails on the first, a pooled and a new
    /// connection; every new connection is evaluated, pooled ones are reused only within the same trust.
    @Test(arguments: [LabServer.Protocols.http1Only, .http2AndHTTP1])
    func pinsAreEnforcedOnFirstPooledAndNewConnections(_ protocols: LabServer.Protocols) async throws {
        try await withLabServers(["good", "mitm"], protocols: protocols) { servers in
            let counting = LabCountingEvaluator(try PublicKeysTrustEvaluator(pins: [Lab.pki.intermediate.certificate.spkiPin], anchors: Lab.anchors))
            // Without the evaluation cache, so that every new connection is evaluated from scratch.
            let session = try labSession(counting) { $0.evaluationCache = nil }
            try await withTeardown({ await session.shutdown() }) { () async throws in
                for _ in 0..<3 {
                    let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(servers["mitm"]!))) }
                    #expect(error?.code == .serverCertificateUntrusted)
                    #expect(error?.trustDecision?.reasons.first?.code == "pin-mismatch")
                }
                #expect(counting.count == 3)
                // The good server: one connection evaluated, then pooled (keep-alive or HTTP/2).
                for _ in 0..<3 { #expect(try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!))).statusCode == 200) }
                #expect(counting.count == 4)
                #expect(session.openConnectionCount == 1)
                if protocols == .http1Only {
                    // The server closes after each of these: every following request needs, and evaluates, a new connection.
                    for _ in 0..<2 {
                        let close = TrustHTTPClientRequest(url: url(servers["good"]!), headers: [.connection: "close"])
                        #expect(try await session.data(for: close).statusCode == 200)
                    }
                    #expect(try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!))).statusCode == 200)
                    #expect(counting.count == 6)
                }
            }
        }
    }

    /// A burst of first requests to one origin: over HTTP/2 they wait for the first connection and share
    /// it (one handshake, one evaluation); over HTTP/1.1 each gets a connection of its own once the first
    /// shows the origin speaks HTTP/1.1. A first connection refused (pin mismatch) leaves no request waiting:
    /// each then connects, and is refused, on its own.
    @Test(arguments: [LabServer.Protocols.http1Only, .http2AndHTTP1])
    func aBurstOfFirstRequestsSharesOneHTTP2Connection(_ protocols: LabServer.Protocols) async throws {
        try await withLabServers(["good", "mitm"], protocols: protocols) { servers in
            let counting = LabCountingEvaluator(try PublicKeysTrustEvaluator(pins: [Lab.pki.intermediate.certificate.spkiPin], anchors: Lab.anchors))
            let session = try labSession(counting) { $0.evaluationCache = nil }
            try await withTeardown({ await session.shutdown() }) { () async throws in
                let burst = 8
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<burst { group.addTask { try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!))).statusCode } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses == Array(repeating: 200, count: burst))
                if protocols == .http1Only {
                    #expect(counting.count >= 2 && counting.count <= burst, "\(counting.count) evaluations")
                } else {
                    #expect(counting.count == 1, "\(counting.count) evaluations")
                    #expect(session.openConnectionCount == 1)
                }
                let before = counting.count
                let codes = await withTaskGroup(of: TrustHTTPClientError.Code?.self) { group in
                    for _ in 0..<4 {
                        group.addTask { await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(servers["mitm"]!))) }?.code }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
                #expect(codes == Array(repeating: .serverCertificateUntrusted, count: 4))
                #expect(counting.count - before == 4)
            }
        }
    }

    /// A lab server's HTTP/2 `/close` ends its connection gracefully (RFC 9113 §6.8): a response opened on the same
    /// connection before it (1 MB the client has not started reading, so some of it is still on its way when both
    /// streams have ended on the server) arrives in full after the GOAWAY, and no second connection is made for it.
    /// The server used to close the connection once `/close`'s own stream ended, cutting the other.
    @Test func aStreamOpenBeforeAGracefulCloseFinishes() async throws {
        try await withLabServers(["good"]) { servers in
            let counting = LabCountingEvaluator(try PublicKeysTrustEvaluator(pins: [Lab.pki.intermediate.certificate.spkiPin], anchors: Lab.anchors))
            let session = try labSession(counting) { $0.evaluationCache = nil }
            try await withTeardown({ await session.shutdown() }) { () async throws in
                let streaming = try await session.bytes(for: TrustHTTPClientRequest(url: url(servers["good"]!, "/bytes/1000000")))
                #expect(streaming.httpVersion == .http2)
                let closing = try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!, "/close")))
                #expect(closing.statusCode == 200 && closing.httpVersion == .http2)
                let body = try await streaming.collect().body
                #expect(body.readableBytes == 1_000_000)
                #expect(counting.count == 1, "\(counting.count) connections")
            }
        }
    }

    /// A request waiting to share the connection another request is making stops waiting at its own deadline.
    /// The leader's handshake is held up by a session-level server-trust handler that answers only when the
    /// test releases it, after the waiting request has failed: so the leader still succeeds. Were the waiting
    /// request to wait for the leader's connect to end, it could only fail once the leader's own deadline had
    /// failed the leader's handshake.
    @Test func aRequestWaitingForASharedConnectionStopsAtItsOwnDeadline() async throws {
        try await withLabServers(["good"]) { servers in
            let asked = AsyncStream<Void>.makeStream()
            let release = AsyncStream<Void>.makeStream()
            let handler = ClosureChallengeHandler { challenge in
                guard challenge.protectionSpace.authenticationMethod == .serverTrust else { return .performDefaultHandling }
                asked.continuation.yield()
                for await _ in release.stream {}
                return .performDefaultHandling
            }
            let session = try labSession { $0.challengeHandler = handler }
            try await withTeardown({ await session.shutdown() }) { () async throws in
                let leader = Task { try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!))).statusCode }
                var questions = asked.stream.makeAsyncIterator()
                _ = await questions.next()
                let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!), timeout: .milliseconds(300))) }
                #expect(error?.code == .timedOut)
                release.continuation.finish()
                #expect(try await leader.value == 200)
                #expect(session.openConnectionCount == 1)
            }
        }
    }

    @Test func idleConnectionsAreClosedAfterTheIdleTimeout() async throws {
        try await withLabServers(["good"], protocols: .http1Only) { servers in
            // 1 s: long enough that the count is read before the sweep on a loaded machine, short for the wait below.
            let session = try labSession { $0.idleTimeout = .seconds(1) }
            try await withTeardown({ await session.shutdown() }) {
                #expect(try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!))).statusCode == 200)
                #expect(session.openConnectionCount == 1)
                var open = 1
                // A bounded wait for the sweep: loose (20 s), as the suites share two busy cores; it ends
                // as soon as the connection is gone.
                for _ in 0..<400 where open > 0 {
                    try await Task.sleep(for: .milliseconds(50))
                    open = session.openConnectionCount
                }
                #expect(open == 0)
                // And the session still works afterwards.
                #expect(try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!))).statusCode == 200)
            }
        }
    }

    @Test func policiesCustomAnchorsAndAFNetworkingModes() async throws {
        try await withLabServers(["good", "self-signed", "mitm", "expired"]) { servers in
            let intermediate = Lab.pki.intermediate.certificate
            let selfSigned = Lab.chain("self-signed")[0]
            let cases: [(any TrustEvaluator, String, Bool)] = [
                (DefaultTrustEvaluator(), "good", false),
                (DefaultTrustEvaluator(anchors: .system(adding: Lab.pki.trustedRoots)), "good", true),
                (DefaultTrustEvaluator(anchors: .only([Lab.pki.root.certificate])), "mitm", false),
                (try PinnedCertificatesTrustEvaluator(certificates: [intermediate]), "good", true),
                (try PinnedCertificatesTrustEvaluator(certificates: [intermediate]), "mitm", false),
                (try PinnedCertificatesTrustEvaluator(certificates: [selfSigned]), "self-signed", true),
                (SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [intermediate], systemAnchors: Lab.anchors), "good", true),
                (SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [intermediate], systemAnchors: Lab.anchors), "mitm", false),
                (
                    SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [selfSigned], allowInvalidCertificates: true, systemAnchors: Lab.anchors),
                    "self-signed", true
                ),
                (SecurityPolicy(pinningMode: .none, allowInvalidCertificates: true, systemAnchors: Lab.anchors), "expired", false),
            ]
            for (index, (trust, server, succeeds)) in cases.enumerated() {
                let session = try labSession(trust)
                let outcome: Bool
                do {
                    outcome = try await session.data(for: TrustHTTPClientRequest(url: url(servers[server]!))).statusCode == 200
                } catch let error as TrustHTTPClientError {
                    outcome = false
                    #expect(error.trustDecision != nil, "case \(index): \(error)")
                }
                #expect(outcome == succeeds, "case \(index) against \(server)")
                await session.shutdown()
            }
        }
    }

    /// Every disposition ends the request distinctly (its own error code), and `useCredential(nil)` is an
    /// error, not a crash.
    @Test func serverTrustDispositions() async throws {
        try await withLabServers(["self-signed", "good"]) { servers in
            let selfSignedURL = url(servers["self-signed"]!)
            func run(_ disposition: @escaping @Sendable (AuthenticationChallenge) -> ChallengeDisposition) async throws -> Result<
                TrustHTTPClientResponse, TrustHTTPClientError
            > {
                let session = try labSession()
                return try await withTeardown({ await session.shutdown() }) {
                    do {
                        return .success(
                            try await session.data(
                                for: TrustHTTPClientRequest(url: selfSignedURL, challengeHandler: ClosureChallengeHandler { disposition($0) })))
                    } catch let error as TrustHTTPClientError {
                        return .failure(error)
                    }
                }
            }
            let accepted = try await run { .useCredential(Credential(trust: $0.serverTrust!)) }
            #expect((try? accepted.get())?.statusCode == 200)
            guard case .failure(let cancelled) = try await run({ _ in .cancelAuthenticationChallenge }) else {
                Issue.record("cancel succeeded")
                return
            }
            #expect(cancelled.code == .cancelled)
            #expect(cancelled.trustDecision?.reasons.first?.code == "refused-by-application")
            guard case .failure(let rejected) = try await run({ _ in .rejectProtectionSpace }) else {
                Issue.record("reject succeeded")
                return
            }
            #expect(rejected.code == .serverCertificateUntrusted)
            #expect(rejected.trustDecision?.reasons.count ?? 0 >= 2)
            guard case .failure(let nilCredential) = try await run({ _ in .useCredential(nil) }) else {
                Issue.record("nil credential succeeded")
                return
            }
            #expect(nilCredential.code == .serverCertificateUntrusted)
            guard case .failure(let wrongKind) = try await run({ _ in .useCredential(Credential(user: "a", password: "b")) }) else {
                Issue.record("user credential accepted as trust")
                return
            }
            #expect(wrongKind.code == .serverCertificateUntrusted)
            guard case .failure(let defaulted) = try await run({ _ in .performDefaultHandling }) else {
                Issue.record("default accepted self-signed")
                return
            }
            #expect(defaulted.code == .serverCertificateHasUnknownRoot)
        }
    }

    @Test func taskHandlerIsAskedBeforeTheSessionHandler() async throws {
        try await withLabServers(["self-signed"]) { servers in
            let asked = NIOLockedValueBox<[String]>([])
            let session = try labSession { configuration in
                configuration.challengeHandler = ClosureChallengeHandler { challenge in
                    asked.withLockedValue { $0.append("session") }
                    return .useCredential(Credential(trust: challenge.serverTrust!))
                }
            }
            try await withTeardown({ await session.shutdown() }) { () async throws in
                let deferring = ClosureChallengeHandler { _ in
                    asked.withLockedValue { $0.append("task") }
                    return .performDefaultHandling
                }
                #expect(try await session.data(for: TrustHTTPClientRequest(url: url(servers["self-signed"]!), challengeHandler: deferring)).statusCode == 200)
                #expect(asked.withLockedValue { $0 } == ["task", "session"])
                let refusing = ClosureChallengeHandler { _ in .cancelAuthenticationChallenge }
                let error = await sessionError {
                    try await session.data(for: TrustHTTPClientRequest(url: url(servers["self-signed"]!), challengeHandler: refusing))
                }
                #expect(error?.code == .cancelled)
            }
        }
    }

    /// A handler that never answers fails the request at its timeout; it never hangs.
    @Test func unansweredChallengeTimesOut() async throws {
        try await withLabServers(["good"]) { servers in
            let session = try labSession()
            try await withTeardown({ await session.shutdown() }) {
                let silent = ClosureChallengeHandler { _ in
                    try? await Task.sleep(for: .seconds(3600))
                    return .performDefaultHandling
                }
                let error = await sessionError {
                    try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!), timeout: .milliseconds(500), challengeHandler: silent))
                }
                #expect(error?.code == .timedOut)
            }
        }
    }

    @Test func delegateShapedHandlerWorksAndToleratesDoubleCompletion() async throws {
        final class Delegate: TrustHTTPClientDelegate {
            func session(
                _ session: TrustHTTPClient, didReceive challenge: AuthenticationChallenge, completionHandler: @escaping @Sendable (ChallengeDisposition) -> Void
            ) {
                guard let trust = challenge.serverTrust else { return completionHandler(.performDefaultHandling) }
                completionHandler(.useCredential(Credential(trust: trust)))
                completionHandler(.cancelAuthenticationChallenge)  // ignored: the first answer counts
            }
        }
        try await withLabServers(["self-signed"]) { servers in
            var configuration = TrustHTTPClientConfiguration()
            configuration.resolve = LabPKI.loopbackResolve
            let delegate = Delegate()
            let session = try TrustHTTPClient(configuration: configuration, delegate: delegate)
            try await withTeardown({ await session.shutdown() }) { () async throws in
                #expect(try await session.data(for: TrustHTTPClientRequest(url: url(servers["self-signed"]!))).statusCode == 200)
            }
        }
    }

    /// TLS 1.2 is the minimum by default; a TLS 1.1 server is refused.
    @Test func tls11ServerIsRefused() async throws {
        let identity = Lab.pki.servers["good"]!
        let server = try await LabServer.start(
            name: "old", host: "good.lab.test", chain: identity.chain, privateKey: identity.privateKey, maximumTLSVersion: .tlsv11,
            minimumTLSVersionOverride: .tlsv1)
        try await withTeardown({ try? await server.shutdown() }) {
            let session = try labSession()
            try await withTeardown({ await session.shutdown() }) {
                let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(server))) }
                #expect(error?.code == .secureConnectionFailed)
                #expect(error?.trustDecision == nil)
            }
        }
    }

    @Test func redirectsAreFollowedBoundedAndStripCredentialsAcrossOrigins() async throws {
        try await withLabServers(["good", "ip-only"]) { servers in
            let session = try labSession { $0.maximumRedirects = 3 }
            try await withTeardown({ await session.shutdown() }) {
                let good = servers["good"]!
                let sameOrigin = try await session.data(
                    for: TrustHTTPClientRequest(url: url(good, "/redirect?to=/headers"), headers: [.authorization: "Bearer secret"]))
                #expect(sameOrigin.statusCode == 200)
                #expect(sameOrigin.text.contains("authorization: Bearer secret"))
                #expect(sameOrigin.redirects.count == 1)
                let other = "https://127.0.0.1:\(servers["ip-only"]!.port)/headers"
                let crossOrigin = try await session.data(
                    for: TrustHTTPClientRequest(
                        url: url(good, "/redirect?to=" + other.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!),
                        headers: [.authorization: "Bearer secret"]))
                #expect(crossOrigin.statusCode == 200)
                #expect(!crossOrigin.text.contains("authorization"))
                let seeOther = try await session.data(
                    for: TrustHTTPClientRequest(url: url(good, "/redirect?status=303&to=/echo"), method: "POST", body: .text("payload")))
                #expect(seeOther.text.hasPrefix("GET"))
                let loop = await sessionError {
                    try await session.data(
                        for: TrustHTTPClientRequest(url: url(good, "/redirect?to=/redirect%3Fto%3D/redirect%253Fto%253D/redirect%25253Fto%25253D/")))
                }
                #expect(loop?.code == .httpTooManyRedirects)
            }
        }
    }

    @Test func bodiesTimeoutsCancellationAndRefusedConnections() async throws {
        try await withLabServers(["good"]) { servers in
            let session = try labSession()
            try await withTeardown({ await session.shutdown() }) {
                let good = servers["good"]!
                let echo = try await session.data(for: TrustHTTPClientRequest(url: url(good, "/echo"), method: "PUT", body: .text("hello body")))
                #expect(echo.text == "PUT\nhello body")
                let large = try await session.bytes(for: TrustHTTPClientRequest(url: url(good, "/bytes/3000000")))
                var received = 0
                for try await chunk in large.body { received += chunk.readableBytes }
                #expect(received == 3_000_000)
                let slow = await sessionError {
                    try await session.data(for: TrustHTTPClientRequest(url: url(good, "/slow?ms=3000"), timeout: .milliseconds(300)))
                }
                #expect(slow?.code == .timedOut)
                let task = Task { try await session.data(for: TrustHTTPClientRequest(url: url(good, "/slow?ms=5000"))) }
                try await Task.sleep(for: .milliseconds(200))
                task.cancel()
                do {
                    _ = try await task.value
                    Issue.record("cancelled request succeeded")
                } catch let error as TrustHTTPClientError {
                    #expect(error.code == .cancelled)
                }
                // Still usable afterwards.
                #expect(try await session.data(for: TrustHTTPClientRequest(url: url(good))).statusCode == 200)
            }
        }
        let closed = try labSession()
        let refused = await sessionError { try await closed.data(for: TrustHTTPClientRequest(url: URL(string: "https://good.lab.test:1/")!)) }
        #expect(refused?.code == .cannotConnectToHost)
        let unsupported = await sessionError { try await closed.data(for: TrustHTTPClientRequest(url: URL(string: "ftp://good.lab.test/")!)) }
        #expect(unsupported?.code == .unsupportedURL)
        await closed.shutdown()
    }

    /// A server that closes the connection right after the handshake (what a TLS 1.3 server refusing a
    /// client certificate does) fails the request at once — it must never wait for the request timeout.
    @Test(arguments: [LabServer.Protocols.http1Only, .http2Only])
    func serverClosingAfterTheHandshakeFailsTheRequest(_ protocols: LabServer.Protocols) async throws {
        let good = Lab.pki.servers["good"]!
        let server = try await LabServer.start(
            name: "closer", host: "good.lab.test", chain: good.chain, privateKey: good.privateKey,
            protocols: protocols, closesAfterHandshake: true)
        // A timeout far past a loaded machine's handshake (a hang still ends as `timedOut`, which is what fails).
        let session = try labSession { $0.requestTimeout = .seconds(20) }
        for _ in 0..<20 {
            let error = await sessionError { try await session.data(for: TrustHTTPClientRequest(url: url(server))) }
            #expect(error != nil)
            #expect(error?.code != .timedOut, "\(String(describing: error))")
        }
        await session.shutdown()
        try await server.shutdown()
    }

    /// A request that succeeds within its timeout leaves no deadline armed on its connection: waited past that
    /// timeout, the connection still carries the next request (over HTTP/1.1, a deadline left to pass would close it
    /// and the next request would open a second one). The connection is opened first, so that the timed request is a
    /// round trip only; its timeout (3 s) is loose for two busy cores.
    @Test(arguments: [LabServer.Protocols.http1Only, .http2AndHTTP1])
    func aConnectionOutlivesTheTimeoutOfARequestThatSucceeded(_ protocols: LabServer.Protocols) async throws {
        try await withLabServers(["good"], protocols: protocols) { servers in
            let server = servers["good"]!
            let session = try labSession()
            try await withTeardown({ await session.shutdown() }) {
                #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server))).statusCode == 200)
                #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server), timeout: .seconds(3))).statusCode == 200)
                try await Task.sleep(for: .milliseconds(3500))
                #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server))).statusCode == 200)
                #expect(server.acceptedConnectionCount == 1, "\(server.acceptedConnectionCount) connections")
                #expect(session.openConnectionCount == 1)
            }
        }
    }
}

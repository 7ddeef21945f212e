import Foundation
import Testing
import Trust
import TrustHTTP
import TrustLab
import TrustTestSupport

/// Starts lab servers for one test and stops them afterwards.
package func withLabServers<T>(_ names: [String], protocols: LabServer.Protocols = .http2AndHTTP1, _ body: ([String: LabServer]) async throws -> T) async throws
    -> T
{
    var servers: [String: LabServer] = [:]
    for name in names { servers[name] = try await LabServer.start(name, pki: Lab.pki, protocols: protocols) }
    do {
        let result = try await body(servers)
        for server in servers.values { try await server.shutdown() }
        return result
    } catch {
        for server in servers.values { try? await server.shutdown() }
        throw error
    }
}

package func labSession(
    _ trust: any TrustEvaluator = DefaultTrustEvaluator(anchors: Lab.anchors), reporter: PinFailureReporter? = nil,
    configure: (inout TrustHTTPClientConfiguration) -> Void = { _ in }
) throws -> TrustHTTPClient {
    var configuration = TrustHTTPClientConfiguration()
    configuration.serverTrust = trust
    configuration.pinFailureReporter = reporter
    configuration.resolve = LabPKI.loopbackResolve
    // Loopback exchanges on a machine that may be loaded (a build beside the suite, three suites per core): a
    // handshake has taken over the 10 s default there. Tests of the timeouts themselves set their own.
    configuration.connectTimeout = .seconds(30)
    configuration.requestTimeout = .seconds(60)
    // Likewise a missing intermediate fetched over loopback (through a lab proxy, say): past the 4 s default budget
    // there (seen: the proxied fetch test, refused for its missing issuer, 1 full run in 12). The fetch stays bounded
    // by the handshake, so by the connect timeout above; tests of the budget set their own.
    configuration.intermediateFetchLimits.budget = .seconds(30)
    configure(&configuration)
    return try TrustHTTPClient(configuration: configuration)
}

package func url(_ server: LabServer, _ path: String = "/") -> URL {
    URL(string: server.baseURL + path)!
}

/// Runs `body` and returns the TrustHTTPClientError it throws (recording an issue if it does not).
package func sessionError(_ body: () async throws -> TrustHTTPClientResponse) async -> TrustHTTPClientError? {
    do {
        let response = try await body()
        Issue.record("expected an error, got status \(response.statusCode)")
        return nil
    } catch let error as TrustHTTPClientError {
        return error
    } catch {
        Issue.record("expected a SessionError, got \(error)")
        return nil
    }
}

/// Whether `session` still completes a normal request to a good lab server (`LabServer.start("good", …)`).
///
/// The follow-up request has its own generous deadline: a session built with a 1 s request timeout
/// for the case under test must not fail the follow-up because the machine is busy.
package func expectUsable(_ session: TrustHTTPClient, _ server: LabServer, sourceLocation: SourceLocation = #_sourceLocation) async {
    do {
        var request = TrustHTTPClientRequest(url: url(server))
        request.timeout = .seconds(60)
        let response = try await session.data(for: request)
        #expect(response.statusCode == 200, sourceLocation: sourceLocation)
        #expect(response.text == "hello from good\n", sourceLocation: sourceLocation)
    } catch {
        Issue.record("the session is no longer usable: \(error)", sourceLocation: sourceLocation)
    }
}

/// Runs `body`, returning its TrustHTTPClientError and how long it took to fail.
package func timedFailure(_ body: () async throws -> TrustHTTPClientResponse) async -> (error: TrustHTTPClientError?, elapsed: Duration) {
    let clock = ContinuousClock()
    let start = clock.now
    let error = await sessionError(body)
    return (error, start.duration(to: clock.now))
}

/// The figure printed for a fault: `fault → code in N ms`.
package func report(_ what: String, _ failure: (error: TrustHTTPClientError?, elapsed: Duration)) {
    let milliseconds = failure.elapsed.components.seconds * 1000 + failure.elapsed.components.attoseconds / 1_000_000_000_000_000
    print("[fault] \(what) → \(failure.error.map { "\($0.code)" } ?? "no error") in \(milliseconds) ms")
}

import Foundation
import Logging
import ServiceLifecycle
import Testing
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustServiceLifecycle
import TrustTestSupport

/// A TrustHTTPClient in a swift-service-lifecycle ServiceGroup: usable while the group runs, shut down when the
/// group shuts down gracefully.
@Suite("Service lifecycle: TrustHTTPClientService", .timeLimit(.minutes(5)), .paced)
struct SessionServiceTests {
    @Test func gracefulShutdownClosesTheSession() async throws {
        try await withLabServers(["good"], protocols: .http1Only) { servers in
            let session = try labSession()
            var logger = Logger(label: "swift-trust.tests.lifecycle")
            logger.logLevel = .critical
            let group = ServiceGroup(services: [TrustHTTPClientService(session)], logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                #expect(try await session.data(for: TrustHTTPClientRequest(url: url(servers["good"]!))).statusCode == 200)
                #expect(session.openConnectionCount == 1)  // the idle connection, pooled
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            #expect(session.openConnectionCount == 0)
        }
    }

    /// Lab servers in the same group: serving while it runs, closed when it shuts down.
    @Test func labServersStopWithTheGroup() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki, protocols: .http1Only)
        let session = try labSession { $0.maximumIdleConnectionsPerOrigin = 0 }
        var logger = Logger(label: "swift-trust.tests.lifecycle")
        logger.logLevel = .critical
        let group = ServiceGroup(services: [LabServerService([server]), TrustHTTPClientService(session)], logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            #expect(try await session.data(for: TrustHTTPClientRequest(url: url(server))).statusCode == 200)
            #expect(server.isListening)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        // The listener is closed (not probed by port: another suite's server could take the port).
        #expect(!server.isListening)
        #expect(session.openConnectionCount == 0)
    }
}

import Foundation
import Logging
import ServiceLifecycle
import Testing
import TrustHTTP
import TrustLab
import TrustServiceLifecycle

/// A Session in a swift-service-lifecycle ServiceGroup: usable while the group runs, shut down when the
/// group shuts down gracefully.
@Suite("Service lifecycle: SessionService", .timeLimit(.minutes(2)))
struct SessionServiceTests {
    @Test func gracefulShutdownClosesTheSession() async throws {
        try await withLabServers(["good"], protocols: .http1Only) { servers in
            let session = try labSession()
            var logger = Logger(label: "swift-trust.tests.lifecycle")
            logger.logLevel = .critical
            let group = ServiceGroup(services: [SessionService(session)], logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                #expect(try await session.data(for: Request(url: url(servers["good"]!))).statusCode == 200)
                #expect(session.openConnectionCount == 1)  // the idle connection, pooled
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            #expect(session.openConnectionCount == 0)
        }
    }
}

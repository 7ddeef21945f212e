import Foundation
import Logging
import ServiceLifecycle
import Testing
import TrustHTTP
import TrustServiceLifecycle
import TrustTestSupport

/// A ReloadingTrustConfiguration (any `Reloading`) polled by a service in a ServiceGroup: a changed file is put in force while the
/// group runs; the polling stops when the group shuts down gracefully.
@Suite("Service lifecycle: ReloadingService", .timeLimit(.minutes(5)), .paced)
struct ReloadingServiceTests {
    @Test func pollsWhileTheGroupRunsAndStopsWithIt() async throws {
        let file = try LabTrustConfigurationFile()
        defer { file.remove() }
        try file.write(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsA))
        let reloading = try ReloadingTrustConfiguration(
            contentsOf: file.path, publicSuffixes: LabTrustConfigurationFile.psl, pollInterval: .milliseconds(20))
        let events = reloading.events()
        var logger = Logger(label: "swift-trust.tests.lifecycle")
        logger.logLevel = .critical
        let group = ServiceGroup(services: [ReloadingService(reloading)], logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            // Atomically: a poll (every 20 ms) that read the file half written would refuse it first, and the
            // event awaited here would be that refusal (the next poll would put the whole file in force).
            try file.write(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsB), atomically: true)
            var iterator = events.makeAsyncIterator()
            #expect(await iterator.next()?.generation == 2)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(reloading.current.entry(for: "good.lab.test").pins?.sha256 == LabTrustConfigurationFile.pinsB)
    }
}

import Foundation
import NIOConcurrencyHelpers
import Testing
import Trust
import TrustLab
import TrustNIO
import TrustTestSupport

/// The three reloaders told the same story through `some Reloading` — a change taken, a broken change refused once
/// and kept as `lastRejection`, the same broken contents not refused again, a fix taken — with the same outcomes,
/// generations and events: one shape, one semantics.
@Suite("Reloading: the trust configuration and both identities keep one shape", .timeLimit(.minutes(5)), .paced)
struct ReloadingShapeTests {
    func story<R: Reloading>(_ reloader: R, change: () throws -> Void, breakFiles: () throws -> Void) throws {
        let events = NIOLockedValueBox<[String]>([])
        let observation = reloader.observe { event in
            events.withLockedValue { $0.append(event.generation.map { "reloaded \($0)" } ?? "rejected") }
        }
        defer { reloader.removeObserver(observation) }
        #expect(reloader.generation == 1 && reloader.lastRejection == nil)
        #expect(reloader.reload() == .unchanged)
        try change()
        #expect(reloader.reload() == .reloaded(generation: 2))
        #expect(reloader.generation == 2)
        try breakFiles()
        let refused = reloader.reload()
        #expect(refused.rejection != nil && reloader.lastRejection == refused.rejection)
        #expect(reloader.generation == 2)
        #expect(reloader.poll() == .unchanged)  // the contents refused are not refused again
        try change()
        #expect(reloader.poll() == .reloaded(generation: 3))
        #expect(reloader.lastRejection == nil && reloader.generation == 3)
        #expect(events.withLockedValue { $0 } == ["reloaded 2", "rejected", "reloaded 3"])
    }

    @Test func trustConfiguration() throws {
        let file = try LabTrustConfigurationFile()
        defer { file.remove() }
        try file.write(LabTrustConfigurationFile.text(LabTrustConfigurationFile.pinsA))
        let reloading = try ReloadingTrustConfiguration(contentsOf: file.path, publicSuffixes: LabTrustConfigurationFile.psl)
        var next = [LabTrustConfigurationFile.pinsB, LabTrustConfigurationFile.pinsA]
        try story(
            reloading, change: { try file.write(LabTrustConfigurationFile.text(next.removeFirst())) },
            breakFiles: { try file.write(#"{"version": 1, "hosts": ["#) })
        #expect(reloading.current.entry(for: "good.lab.test").pins?.sha256 == LabTrustConfigurationFile.pinsA)
    }

    /// A PEM identity folder holding the leaf `"NAME 1"`; `next()` writes `"NAME 2"`, `"NAME 3"`…, `breakChain()`
    /// leaves a chain file that is not PEM.
    final class RotatingFolder {
        let folder: IdentityFolder
        let name: String
        var count = 1

        init(_ name: String) throws {
            folder = try IdentityFolder()
            self.name = name
            try write()
        }

        func write() throws {
            try folder.writePEM(try Lab.pki.intermediate.leaf(commonName: "\(name) \(count)", dnsNames: ["reload.lab.test"]))
        }

        func next() throws {
            count += 1
            try write()
        }

        func breakChain() throws { try "not PEM".write(toFile: folder.chain, atomically: true, encoding: .utf8) }
    }

    @Test func clientIdentity() throws {
        let files = try RotatingFolder("client")
        let identity = try ReloadingClientIdentity(.pem(certificateChain: files.folder.chain, key: files.folder.key))
        try story(identity, change: files.next, breakFiles: files.breakChain)
        #expect(identity.current.certificate.subject.description.contains("client 3"))
    }

    @Test func serverIdentity() throws {
        let files = try RotatingFolder("server")
        let identity = try ReloadingServerIdentity(.init(certificateChain: files.folder.chain, key: files.folder.key))
        try story(identity, change: files.next, breakFiles: files.breakChain)
        #expect(identity.current.certificate.subject.description.contains("server 3"))
        #expect(identity.current.generation == identity.generation)
    }
}

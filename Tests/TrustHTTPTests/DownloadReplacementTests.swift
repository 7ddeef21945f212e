import Foundation
import Testing
import Trust
import TrustHTTP
import TrustLab
import TrustHTTPTestSupport
import TrustTestSupport

/// `Session.download(for:to:progress:)` replacing a file that exists: the replaced file's permission bits are
/// kept and a symbolic link stays, its target replaced (`trust get -o` writes such a file in place: OutputFileTests).
@Suite("Downloads over existing files: mode and symbolic links kept", .paced)
struct DownloadReplacementTests {
    /// Session.download onto an existing file keeps its permission bits, and through a symbolic link replaces the
    /// link's target, the link staying; a new file gets 0666 less the umask.
    @Test func downloadKeepsModeAndWritesThroughLinks() async throws {
        let plain = try await LabServer.startPlain(name: "plain")
        let session = try labSession()
        let folder = try temporaryDirectory()
        let secret = folder + "/secret", target = folder + "/target", link = folder + "/link"
        for path in [secret, target] { try Data("old".utf8).write(to: URL(fileURLWithPath: path)) }
        #expect(chmod(secret, 0o600) == 0 && chmod(target, 0o640) == 0)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "target")
        for path in [secret, link, folder + "/new"] {
            _ = try await session.download(for: Request(url: url(plain, "/")), to: URL(fileURLWithPath: path))
        }
        func mode(_ path: String) throws -> Int { try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1 }
        #expect(try mode(secret) == 0o600)
        #expect(try String(contentsOfFile: secret, encoding: .utf8) == "hello from plain\n")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "target")
        #expect(try mode(target) == 0o640 && String(contentsOfFile: target, encoding: .utf8) == "hello from plain\n")
        let mask = umask(0)
        umask(mask)
        #expect(try mode(folder + "/new") == 0o666 & ~Int(mask))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["link", "new", "secret", "target"])
        try? FileManager.default.removeItem(atPath: folder)
        await session.shutdown()
        try await plain.shutdown()
    }
}

import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// `TrustHTTPClient.download(for:to:progress:)` replacing what exists: a regular file's permission bits are kept; a symbolic
/// link is replaced by the file, its target never written (`trust get -o` writes such a file in place, as curl:
/// OutputFileTests).
@Suite("Downloads over existing files: mode kept, symbolic links replaced", .paced)
struct DownloadReplacementTests {
    /// TrustHTTPClient.download onto an existing file keeps its permission bits; onto a symbolic link to a file in another
    /// folder (a link planted in a shared folder, aiming at someone's file) replaces the link, the file it named
    /// untouched; a new file gets 0666 less the umask.
    @Test func downloadKeepsModeAndReplacesLinks() async throws {
        let plain = try await LabServer.startPlain(name: "plain")
        let session = try labSession()
        let folder = try temporaryDirectory()
        let elsewhere = try temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(atPath: folder)
            try? FileManager.default.removeItem(atPath: elsewhere)
        }
        let secret = folder + "/secret"
        let target = elsewhere + "/target"
        let link = folder + "/link"
        for path in [secret, target] { try Data("old".utf8).write(to: URL(fileURLWithPath: path)) }
        #expect(chmod(secret, 0o600) == 0 && chmod(target, 0o640) == 0)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        for path in [secret, link, folder + "/new"] {
            _ = try await session.download(for: TrustHTTPClientRequest(url: url(plain, "/")), to: URL(fileURLWithPath: path))
        }
        func mode(_ path: String) throws -> Int { try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1 }
        let mask = Int(FileCreationMask.current)
        #expect(try mode(secret) == 0o600)
        #expect(try String(contentsOfFile: secret, encoding: .utf8) == "hello from plain\n")
        // The link is now the downloaded file (a new file's mode), and the file it named is as it was.
        #expect(try FileManager.default.attributesOfItem(atPath: link)[.type] as? FileAttributeType == .typeRegular)
        #expect(try mode(link) == 0o666 & ~mask && String(contentsOfFile: link, encoding: .utf8) == "hello from plain\n")
        #expect(try mode(target) == 0o640 && String(contentsOfFile: target, encoding: .utf8) == "old")
        #expect(try mode(folder + "/new") == 0o666 & ~mask)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["link", "new", "secret"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere) == ["target"])
        await session.shutdown()
        try await plain.shutdown()
    }

    /// The umask a new file's mode comes from is read without setting it (`/proc/self/status` on Linux: setting it,
    /// even back at once, makes files other threads create meanwhile 0666/0777), and is the process's: the one a
    /// child inherits and its shell prints.
    @Test func umaskReadWithoutSettingIt() async throws {
        let (status, printed, _) = try await run("/bin/sh", ["-c", "umask"])
        #expect(status == 0)
        let shell = mode_t(printed.trimmingCharacters(in: .whitespacesAndNewlines), radix: 8)
        #expect(shell != nil && FileCreationMask.current == shell, "sh: \(printed)")
        #if os(Linux)
            #expect(FileCreationMask.fromProcStatus() == shell, "no Umask: line in /proc/self/status")
        #endif
    }
}

import Foundation
import Testing
import Trust
import TrustLab
import TrustTestSupport

/// `trust get -o FILE` as curl's `-o`: a file that exists is written in place — its mode kept (a 0600 file stays
/// 0600), a symbolic link written through (the link stays, its target receives the body, a dangling link's
/// target is created); a new file is written to a temporary file renamed into place, 0666 less the umask.
/// curl is run on the same files where it is installed.
@Suite("trust get -o over existing files, as curl", .serialized, .timeLimit(.minutes(5)), .paced)
struct OutputFileTests {
    /// The permission bits of `path` (following links).
    static func mode(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    /// Writes `/` of `server` with `tool` (trust or curl) into fresh files in a new folder; returns the folder.
    func written(by tool: [String], _ server: LabServer) async throws -> String {
        let folder = try temporaryDirectory()
        for name in ["secret", "target", "other"] { try Data("an older, longer file\n".utf8).write(to: URL(fileURLWithPath: folder + "/" + name)) }
        #expect(chmod(folder + "/secret", 0o600) == 0 && chmod(folder + "/target", 0o640) == 0 && chmod(folder + "/other", 0o604) == 0)
        try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: "target")
        try FileManager.default.createSymbolicLink(atPath: folder + "/dangling", withDestinationPath: "created")
        try FileManager.default.linkItem(atPath: folder + "/other", toPath: folder + "/hardlink")
        for name in ["secret", "link", "dangling", "hardlink", "new"] {
            let (status, _, err) = try await run(tool[0], Array(tool.dropFirst()) + ["-sS", "-o", folder + "/" + name, server.baseURL + "/"])
            #expect(status == 0, "\(tool[0]) -o \(name): \(err)")
        }
        return folder
    }

    @Test func existingFilesKeepModeAndLinks() async throws {
        let server = try await LabServer.startPlain(name: "plain", host: "127.0.0.1")
        let body = "hello from plain\n"
        let mask = FileCreationMask.current
        var tools = [[CLI.binary, "get"]]
        if ExternalTool.curl.isInstalled {
            tools.append([ExternalTool.curl.path])
        } else {
            print("OutputFileTests: curl is not installed at \(ExternalTool.curl.path): trust checked against curl 7.88's recorded results only")
        }
        for tool in tools {
            let folder = try await written(by: tool, server)
            let read = { (name: String) in (try? String(contentsOfFile: folder + "/" + name, encoding: .utf8)) ?? "<unreadable>" }
            #expect(Self.mode(folder + "/secret") == 0o600, "\(tool[0])")
            #expect(read("secret") == body)
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/link")) == "target", "\(tool[0]): the link was replaced")
            #expect(Self.mode(folder + "/target") == 0o640 && read("target") == body, "\(tool[0])")
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/dangling")) == "created" && read("created") == body, "\(tool[0])")
            // In place: the other name of a hard link sees the new body too.
            #expect(read("other") == body && Self.mode(folder + "/other") == 0o604, "\(tool[0])")
            #expect(Self.mode(folder + "/new") == 0o666 & ~Int(mask) && read("new") == body, "\(tool[0])")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder).sorted()) ?? []
            #expect(names == ["created", "dangling", "hardlink", "link", "new", "other", "secret", "target"], "\(tool[0]): \(names)")
            try? FileManager.default.removeItem(atPath: folder)
        }
        try await server.shutdown()
    }
}

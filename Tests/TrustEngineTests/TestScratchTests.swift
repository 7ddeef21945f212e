import Foundation
import Testing
import TrustTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The test suite's scratch folder (``TestScratch``): one private root per test process, a fresh folder or file
/// name in it per request, and a remover (the one run at exit) that leaves nothing of a root behind. The remover is
/// tried on a root of this test's own: the process's root is in use by every other test running meanwhile.
@Suite(.paced) struct TestScratchTests {
    /// `lstat`'s mode of `path` (permission bits and type), nil when there is nothing there.
    static func mode(_ path: String) -> mode_t? {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_mode : nil
    }

    static func parent(_ path: String) -> String { (path as NSString).deletingLastPathComponent }

    @Test func foldersAndFilesAreNewAndInOnePrivateRoot() throws {
        let root = try TestScratch.root
        #expect(try TestScratch.root == root)
        #expect(Self.parent(root) == Self.parent(NSTemporaryDirectory() + "x"))
        #expect((root as NSString).lastPathComponent.hasPrefix("swift-trust-tests-"))
        #expect(Self.mode(root).map { $0 & S_IFMT == S_IFDIR && $0 & 0o7777 == 0o700 } == true, "\(String(describing: Self.mode(root)))")

        let first = try TestScratch.folder("scratch-test")
        let second = try TestScratch.folder("scratch-test")
        defer { for folder in [first, second] { try? FileManager.default.removeItem(atPath: folder) } }
        #expect(first != second)
        for folder in [first, second] {
            #expect(Self.parent(folder) == root)
            #expect((folder as NSString).lastPathComponent.hasPrefix("scratch-test-"))
            #expect(Self.mode(folder).map { $0 & S_IFMT == S_IFDIR } == true)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        }
        // temporaryDirectory() is such a folder too.
        let other = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: other) }
        #expect(Self.parent(other) == root && ![first, second].contains(other))

        let file = try TestScratch.file("scratch.err")
        let another = try TestScratch.file("scratch.err")
        #expect(file != another && Self.parent(file) == root && Self.parent(another) == root)
        #expect(file.hasSuffix("-scratch.err"))
        #expect(Self.mode(file) == nil && Self.mode(another) == nil)
    }

    /// A root is made 0700, and removed whole: nested folders, folders a test made unwritable or unreadable,
    /// and a symbolic link — removed, not followed (what it points to, outside the root, stays).
    @Test func theRemoverLeavesNothingOfARoot() throws {
        let parent = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let root = try TestScratch.makeRoot(in: parent)
        #expect(root != (try TestScratch.root))
        #expect(Self.mode(root).map { $0 & 0o7777 } == 0o700)

        let outsideFolder = try temporaryDirectory()
        let outside = outsideFolder + "/kept.pem"
        try Data("outside".utf8).write(to: URL(fileURLWithPath: outside))
        #expect(chmod(outsideFolder, 0o555) == 0)
        defer {
            _ = chmod(outsideFolder, 0o755)
            try? FileManager.default.removeItem(atPath: outsideFolder)
        }

        let nested = root + "/a/b/c"
        try FileManager.default.createDirectory(atPath: nested, withIntermediateDirectories: true)
        try Data("key".utf8).write(to: URL(fileURLWithPath: nested + "/key.pem"))
        try FileManager.default.createDirectory(atPath: root + "/read-only/inner", withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/read-only/inner/file"))
        try FileManager.default.createDirectory(atPath: root + "/closed", withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/closed/file"))
        try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: outside)
        try FileManager.default.createSymbolicLink(atPath: root + "/folder-link", withDestinationPath: outsideFolder)
        #expect(chmod(root + "/read-only/inner", 0o500) == 0 && chmod(root + "/read-only", 0o500) == 0 && chmod(root + "/closed", 0o000) == 0)
        defer {
            // Should the remover fail, the folders are opened again for the removal of `parent`.
            _ = chmod(root + "/read-only", 0o700)
            _ = chmod(root + "/read-only/inner", 0o700)
            _ = chmod(root + "/closed", 0o700)
        }

        try TestScratch.remove(root)
        #expect(Self.mode(root) == nil, "the root is still there: \(filesIn(root))")
        #expect(filesIn(parent).isEmpty, "\(filesIn(parent))")
        #expect((try? String(contentsOfFile: outside, encoding: .utf8)) == "outside")
        #expect(Self.mode(outsideFolder).map { $0 & 0o7777 } == 0o555, "the remover changed a folder outside the root")

        // Removing what is not there is an error, not a silent success.
        #expect(throws: TestScratch.Failure.self) { try TestScratch.remove(root) }
    }
}

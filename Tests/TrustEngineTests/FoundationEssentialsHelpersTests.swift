import Testing
import TrustTestSupport

@testable import Trust

/// The few helpers that stand in for full Foundation's (NSString paths, `trimmingCharacters`, `String(format:)`,
/// `NSLock`), so that the engine links FoundationEssentials only.
@Suite("Helpers in place of full Foundation: paths, trimming, hex, lock")
struct FoundationEssentialsHelpersTests {
    @Test("Paths join and split as NSString's path methods did")
    func paths() {
        #expect("a".joiningPath("b") == "a/b" && "a/".joiningPath("b") == "a/b" && "".joiningPath("b") == "b" && "/".joiningPath("b") == "/b")
        let parents = ["/a/b.json": "/a", "/b.json": "/", "b.json": "", "a/b/": "a", "/": "/", "a//b": "a", "": "", "/a/b//": "/a"]
        for (path, parent) in parents { #expect(path.parentPath == parent, "\(path)") }
        let names = ["/a/b.json": "b.json", "b.json": "b.json", "a/b/": "b", "/": "/", "": ""]
        for (path, name) in names { #expect(path.pathName == name, "\(path)") }
        let extensions = ["a/b.pem": "pem", "b.tar.gz": "gz", "a.b/c": "", ".pem": "", "dir/.hidden": "", "x.": "", "CERT.CRT": "CRT"]
        for (path, ext) in extensions { #expect(path.pathFileExtension == ext, "\(path)") }
    }

    @Test("Trimming takes ASCII blanks and line ends only, never other text")
    func trimming() {
        #expect(" \t a b \t ".trimmingASCIIBlanks() == "a b")
        #expect("\r\n a \n".trimmingASCIIWhitespace() == "a")
        #expect("\n{ }\n\r\n".trimmingASCIINewlines() == "{ }")
        #expect(" \n ".trimmingASCIIWhitespace().isEmpty && "".trimmingASCIIBlanks().isEmpty)
        // No-break space and ideographic space are text here, and a combining mark after a blank stays with it.
        #expect("\u{A0}a\u{3000}".trimmingASCIIBlanks() == "\u{A0}a\u{3000}")
        #expect("a \u{301}".trimmingASCIIBlanks() == "a \u{301}")
        #expect(Substring("  é  ").trimmingASCIIBlanks() == "é")
    }

    @Test("Hex text: two digits a byte, as String(format: \"%02x\") wrote them")
    func hex() {
        #expect([UInt8]().hexText().isEmpty)
        #expect([0x00, 0x0f, 0xa0, 0xff].hexText() == "000fa0ff")
        #expect([0xde, 0xad, 0x01].hexText(separator: ":", uppercase: true) == "DE:AD:01")
        #expect(
            (0...255).map(UInt8.init).hexText()
                == (0...255).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined())
    }

    @Test("The lock excludes: 8 tasks × 10,000 increments under it lose none; a recursive lock can be taken again")
    func lock() async {
        final class Counter: @unchecked Sendable {
            let lock = Lock()
            var value = 0
        }
        let counter = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<10_000 { counter.lock.withLock { counter.value += 1 } }
                }
            }
        }
        #expect(counter.value == 80_000)
        let recursive = Lock(recursive: true)
        let inner = recursive.withLock { recursive.withLock { 42 } }
        #expect(inner == 42)
    }

    @Test("A file's first bytes: at most as many as asked, nil for a folder or nothing")
    func readPrefix() throws {
        let folder = try TestScratch.folder("read-prefix")
        let path = folder.joiningPath("list.dat")
        try PrivateFile.write(Array(repeating: UInt8(ascii: "x"), count: 10_000), to: path)
        #expect(LocalFile.readPrefix(path, count: 4096)?.count == 4096)
        try PrivateFile.write(Array("short".utf8), to: path)
        #expect(LocalFile.readPrefix(path, count: 4096) == Array("short".utf8))
        #expect(LocalFile.readPrefix(folder, count: 16) == nil)
        #expect(LocalFile.readPrefix(folder.joiningPath("missing"), count: 16) == nil)
        #expect(LocalFile.isFolder(folder) && !LocalFile.isFolder(path) && LocalFile.exists(path))
        #expect(!LocalFile.exists(folder.joiningPath("missing")))
    }
}

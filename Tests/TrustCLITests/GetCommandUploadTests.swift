import Crypto
import Foundation
import Testing
import TrustLab

#if canImport(Glibc)
    import Glibc
    import TrustHTTPTestSupport
    import TrustTestSupport
#endif

/// `trust get -T/--upload-file` as curl's: a PUT of a file read as it is sent (or of standard input,
/// chunked), the file's name appended to a URL without one, `Expect: 100-continue` before a body
/// over 1 MiB or of unknown size, `--expect100-timeout`, and curl's exit codes (26 for a file it
/// cannot read, 65 for standard input that would have to be sent twice). The lab's `/upload` route
/// reports the bytes, SHA-256, framing and `Expect` it received.
@Suite("trust get -T (upload a file)", .timeLimit(.minutes(5)), .paced)
struct GetCommandUploadTests {
    func lab(_ server: LabServer) -> [String] {
        ["--resolve", "\(server.host):\(server.port):127.0.0.1", "--cacert", CLI.lab + "/roots.pem"]
    }

    func trust(_ server: LabServer, _ path: String, _ extra: [String], stdin: String? = nil) async throws -> (Int32, String, String) {
        try await run(CLI.binary, ["get", server.baseURL + path] + lab(server) + extra, stdin: stdin)
    }

    /// A file of `count` bytes (a repeating pattern) in a new directory, and its name.
    func file(named name: String, count: Int) throws -> (path: String, bytes: Data) {
        let bytes = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 251) })
        let path = try temporaryDirectory() + "/" + name
        try bytes.write(to: URL(filePath: path))
        return (path, bytes)
    }

    /// What the lab's `/upload` route answers for `bytes`.
    func report(_ bytes: Data, framing: String, expect: String = "none") -> String {
        "bytes \(bytes.count)\nsha256 \(Self.hex(SHA256.hash(data: bytes)))\nframing \(framing)\nexpect \(expect)\n"
    }

    static func hex(_ digest: SHA256.Digest) -> String { digest.map { String(format: "%02x", $0) }.joined() }

    /// A small file: PUT with its size, no `Expect`, the name appended (percent-encoded) to a URL
    /// ending in `/`, and not to one that names a file; over HTTP/1.1 and HTTP/2.
    @Test(arguments: ["--http1.1", "--http2"])
    func putsAFileUnderItsName(_ version: String) async throws {
        let (path, bytes) = try file(named: "a b+c.txt", count: 5_000)
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let (status, out, err) = try await trust(good, "/upload/", ["-T", path, version, "-v", "-w", "%{url_effective}\n"])
            #expect(status == 0, "\(err)")
            #expect(out == report(bytes, framing: "content-length") + good.baseURL + "/upload/a%20b%2Bc.txt\n")
            #expect(err.contains("> PUT /upload/a%20b%2Bc.txt"), "\(err)")
            #expect(err.contains("> content-length: 5000"), "\(err)")
            #expect(!err.contains("> expect"), "\(err)")

            let (named, namedOut, _) = try await trust(good, "/upload", ["-T", path, version, "-w", "%{url_effective}\n"])
            #expect(named == 0)
            #expect(namedOut == report(bytes, framing: "content-length") + good.baseURL + "/upload\n")

            // -X names another method; the body is the file's (text, as /echo writes it back as text).
            let text = try temporaryDirectory() + "/note.txt"
            try Data("a note\n".utf8).write(to: URL(filePath: text))
            let (echoed, echo, _) = try await trust(good, "/echo", ["-T", text, "-X", "POST", version])
            #expect(echoed == 0)
            #expect(echo == "POST\na note\n")
        }
    }

    /// Over 1 MiB: `Expect: 100-continue` (the lab answers `100` and the body follows); `-H "Expect:"`
    /// turns it off. A server that never answers `100` gets the body after `--expect100-timeout`; one that
    /// refuses before the body has its answer written; a `417` is sent again without the expectation.
    @Test func asksForContinueAboveOneMebibyte() async throws {
        let (path, bytes) = try file(named: "big.bin", count: 1024 * 1024 + 1)
        let (exactPath, exactlyOne) = try file(named: "one.bin", count: 1024 * 1024)
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let (status, out, err) = try await trust(good, "/upload", ["-T", path, "--http1.1", "-v"])
            #expect(status == 0, "\(err)")
            #expect(out == report(bytes, framing: "content-length", expect: "100-continue"))
            #expect(err.contains("> expect: 100-continue"), "\(err)")

            #expect(try await trust(good, "/upload", ["-T", exactPath, "--http1.1"]).1 == report(exactlyOne, framing: "content-length"))
            #expect(try await trust(good, "/upload", ["-T", path, "-H", "Expect:"]).1 == report(bytes, framing: "content-length"))

            // A server silent about `100`: the body goes after the timeout, not never.
            let (waited, waitedOut, waitedErr) = try await trust(good, "/expect/ignore", ["-T", path, "--http1.1", "--expect100-timeout", "0.2"])
            #expect(waited == 0, "\(waitedErr)")
            #expect(waitedOut == report(bytes, framing: "content-length", expect: "100-continue"))

            let (refused, refusal, _) = try await trust(good, "/expect/refuse", ["-T", path, "--http1.1", "-w", "%{http_code}", "--fail"])
            #expect(refused == 22)
            #expect(refusal == "413")

            let (retried, retriedOut, retriedErr) = try await trust(good, "/expect/417", ["-T", path, "--http1.1"])
            #expect(retried == 0, "\(retriedErr)")
            #expect(retriedOut == report(bytes, framing: "content-length"))
        }
    }

    /// `-T -`: standard input, of unknown length: chunked over HTTP/1.1, with `Expect`; over HTTP/2,
    /// DATA frames to END_STREAM. No name is appended for standard input.
    @Test(arguments: ["--http1.1", "--http2"])
    func streamsStandardInput(_ version: String) async throws {
        let text = String(repeating: "standard input, line by line\n", count: 20_000)
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let (status, out, err) = try await trust(good, "/upload", ["-T", "-", version, "-w", "%{url_effective}\n"], stdin: text)
            #expect(status == 0, "\(err)")
            let lines = out.split(separator: "\n").map(String.init)
            #expect(lines.first == "bytes \(text.utf8.count)")
            #expect(lines.dropFirst().first == "sha256 " + Self.hex(SHA256.hash(data: Data(text.utf8))))
            if version == "--http1.1" { #expect(lines.dropFirst(2).first == "framing chunked") }
            #expect(lines.dropFirst(3).first == "expect 100-continue")
            #expect(lines.last == good.baseURL + "/upload")
        }
    }

    /// A named pipe is read once, as standard input is: chunked, its bytes in order.
    @Test func readsANamedPipe() async throws {
        let path = try temporaryDirectory() + "/pipe"
        #expect(mkfifo(path, 0o600) == 0)
        let text = String(repeating: "from a pipe\n", count: 10_000)
        Thread.detachNewThread {
            // Blocks until the command opens the pipe, then writes and closes it (the end of the body).
            let descriptor = open(path, O_WRONLY)
            guard descriptor >= 0 else { return }
            _ = text.utf8CString.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count - 1) }
            close(descriptor)
        }
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let (status, out, err) = try await trust(good, "/upload/", ["-T", path, "--http1.1", "-H", "Expect:", "-w", "%{url_effective}"])
            #expect(status == 0, "\(err)")
            #expect(
                out.hasPrefix("bytes \(text.utf8.count)\nsha256 " + Self.hex(SHA256.hash(data: Data(text.utf8))) + "\nframing chunked\nexpect none\n"), "\(out)"
            )
            #expect(out.hasSuffix("/upload/pipe"))
        }
    }

    /// What curl refuses, with curl's codes: a missing file or a directory (26, nothing sent), -T with
    /// -d or -I (2), a negative --expect100-timeout (2), and standard input that would have to be sent a
    /// second time — a Digest challenge after the body went — (65, "rewind"), with no password shown.
    @Test func refusesAsCurl() async throws {
        let directory = try temporaryDirectory()
        let (path, _) = try file(named: "small.txt", count: 10)
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let (missing, _, missingErr) = try await trust(good, "/upload", ["-T", directory + "/absent.txt"])
            #expect(missing == 26)
            #expect(missingErr.contains("(26)") && missingErr.contains("absent.txt"), "\(missingErr)")
            #expect(try await trust(good, "/upload/", ["-T", directory]).0 == 26)
            #expect(try await trust(good, "/upload", ["-T", path, "-d", "x"]).0 == 2)
            #expect(try await trust(good, "/upload", ["-T", path, "-I"]).0 == 2)
            #expect(try await trust(good, "/upload", ["-T", path, "--expect100-timeout", "-1"]).0 == 2)

            let (rewind, _, rewindErr) = try await trust(
                good, "/digest", ["-T", "-", "--digest", "-u", "alice:wonderland", "--http1.1", "-v"], stdin: "a body sent once")
            #expect(rewind == 65, "\(rewindErr)")
            #expect(rewindErr.contains("rewind"), "\(rewindErr)")
            #expect(!rewindErr.contains("wonderland"))
        }
    }
}

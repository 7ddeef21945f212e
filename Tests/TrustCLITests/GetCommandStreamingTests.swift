import Foundation
import Testing
import Trust
import TrustLab

#if canImport(Glibc)
    import Glibc
    import TrustHTTPTestSupport
    import TrustTestSupport
#endif

/// `trust get` streams: the body is written as it arrives, memory stays bounded, a closed pipe or
/// a write error is exit 23 (never a trap), Ctrl-C is exit 130 with no partial file, `-m` covers
/// the body, `--speed-time` ends a stalled transfer, `--max-filesize` is exit 63 — as curl.
@Suite("trust get streaming, signals and timeouts", .serialized, .timeLimit(.minutes(5)), .paced)
struct GetCommandStreamingTests {
    func plainArguments(_ server: LabServer, _ path: String) -> [String] {
        ["get", server.baseURL + path, "--resolve", "\(server.host):\(server.port):127.0.0.1"]
    }

    /// 300 MB through a process that holds a small part of it: without streaming the whole body
    /// would be collected (or refused as too large) before a byte is written.
    @Test func largeBodyStreamsInBoundedMemory() async throws {
        let server = try await LabServer.startPlain(name: "plain")
        try await withTeardown({ try? await server.shutdown() }) {
            let dir = try temporaryDirectory()
            let size = 300_000_000
            let child = try SpawnedCommand(
                CLI.binary, plainArguments(server, "/bytes/\(size)") + ["-w", "%{size_download}"],
                stdout: "/dev/null", stderr: dir + "/err", measuresPeak: true)
            let (status, _, peak) = await child.wait()
            #expect(status == 0, "\(child.stderrText)")
            if child.peakIsOwn {
                #expect(peak < 150 * 1024, "peak resident set \(peak) KiB for a \(size)-byte body")
            } else {
                print("[streaming] no GNU time (/usr/bin/time): the child's own peak cannot be told from this process's; not judged")
            }

            // -o: the file is complete, and no temporary file is left beside it.
            let out = dir + "/body.bin"
            let (written, _, err) = try await run(CLI.binary, plainArguments(server, "/bytes/20000000") + ["-o", out])
            #expect(written == 0, "\(err)")
            #expect((try? FileManager.default.attributesOfItem(atPath: out)[.size] as? Int) == 20_000_000)
            #expect(filesIn(dir) == ["body.bin", "err"])
        }
    }

    /// `trust get URL | head -c 10`: curl's "Failure writing output to destination", exit 23.
    @Test func closedPipeIsExit23NotATrap() async throws {
        let server = try await LabServer.startPlain(name: "plain")
        try await withTeardown({ try? await server.shutdown() }) {
            let command = ([CLI.binary] + plainArguments(server, "/bytes/5000000")).map { "'\($0)'" }.joined(separator: " ")
            let (_, out, err) = try await run("/bin/bash", ["-c", command + " | head -c 10 > /dev/null; echo ${PIPESTATUS[0]}"])
            #expect(out == "23\n", "\(err)")
            #expect(err.contains("Failure writing output to destination"))
            #expect(!err.contains("Fatal error"))
            // One line besides the progress meter (its header, and its lines after carriage returns).
            let lines = err.split(separator: "\n").filter { !$0.hasPrefix("  % Total") && !$0.contains("Dload  Upload") && !$0.hasPrefix("\r") }
            #expect(lines.count == 1, "\(err.debugDescription)")
        }
    }

    @Test func writeErrorsAreExit23AndLeaveNothing() async throws {
        let server = try await LabServer.startPlain(name: "plain")
        try await withTeardown({ try? await server.shutdown() }) {
            let (full, _, fullErr) = try await run(CLI.binary, plainArguments(server, "/bytes/100000") + ["-o", "/dev/full"])
            #expect(full == 23)
            #expect(fullErr.contains("Failure writing output to destination"))
            #expect(!fullErr.contains("Fatal error"))
            let (missing, _, _) = try await run(CLI.binary, plainArguments(server, "/bytes/100") + ["-o", "/nonexistent-\(UUID().uuidString)/out"])
            #expect(missing == 23)
        }
    }

    /// The body is on disk while it arrives (in the temporary file), and Ctrl-C ends at once with
    /// exit 130 and removes it.
    @Test func interruptIsExit130AndLeavesNoPartialFile() async throws {
        let server = try TrickleServer(total: 50_000_000, first: 65_536, chunk: 1024, interval: 0.05)
        defer { server.stop() }
        let dir = try temporaryDirectory()
        let child = try SpawnedCommand(
            CLI.binary, ["get", server.baseURL + "/big", "-o", dir + "/out"], stdout: "/dev/null",
            stderr: try TestScratch.file("interrupted.err"))
        let streaming = await eventually {
            filesIn(dir).contains { name in
                name.hasPrefix(".out.trust-") && ((try? FileManager.default.attributesOfItem(atPath: dir + "/" + name)[.size] as? Int) ?? 0) >= 65_536
            }
        }
        #expect(streaming, "the body is not written as it arrives: \(filesIn(dir))")
        let sent = ContinuousClock.now
        kill(child.pid, SIGINT)
        let (status, signal, _) = await child.wait(limit: 10)
        #expect(status == 130, "signal \(signal.map(String.init) ?? "none"): \(child.stderrText)")
        #expect(sent.duration(to: .now) < .seconds(3))
        #expect(filesIn(dir).isEmpty, "\(filesIn(dir))")
    }

    /// `-m` bounds the whole transfer, the streamed body included, and the process exits at once.
    @Test func maxTimeCoversTheBody() async throws {
        let server = try TrickleServer(total: 10_000_000, first: 1000, chunk: 100, interval: 0.1)
        defer { server.stop() }
        let dir = try temporaryDirectory()
        let start = ContinuousClock.now
        let (status, _, err) = try await run(CLI.binary, ["get", server.baseURL + "/", "-m", "1", "-o", dir + "/out"])
        #expect(status == 28)
        #expect(err.contains("Operation timed out after"), "\(err)")
        #expect(start.duration(to: .now) < .seconds(12), "loose: the machine runs suites in parallel")
        #expect(filesIn(dir).isEmpty)
    }

    /// curl's --speed-time / --speed-limit: slower than the limit for that long is exit 28.
    @Test func speedLimitEndsASlowOrStalledTransfer() async throws {
        let stalled = try TrickleServer(total: 1000, first: 10, interval: nil)
        defer { stalled.stop() }
        let start = ContinuousClock.now
        let (status, _, err) = try await run(CLI.binary, ["get", stalled.baseURL + "/", "--speed-time", "1", "-o", "/dev/null"])
        #expect(status == 28)
        #expect(err.contains("Operation too slow. Less than 1 bytes/sec transferred the last 1 seconds"), "\(err)")
        #expect(start.duration(to: .now) < .seconds(12), "loose: the machine runs suites in parallel")

        let slow = try TrickleServer(total: 10_000_000, first: 100, chunk: 100, interval: 0.1)
        defer { slow.stop() }
        let (tooSlow, _, slowErr) = try await run(CLI.binary, ["get", slow.baseURL + "/", "-y", "2", "-Y", "100000", "-o", "/dev/null"])
        #expect(tooSlow == 28)
        #expect(slowErr.contains("Less than 100000 bytes/sec"), "\(slowErr)")
        // Fast enough: no abort.
        let fast = try TrickleServer(total: 200_000, first: 200_000, interval: 0.01)
        defer { fast.stop() }
        #expect(try await run(CLI.binary, ["get", fast.baseURL + "/", "--speed-time", "1", "-o", "/dev/null"]).0 == 0)
    }

    /// A transfer cut short (the server closes mid-body) exits 18 and leaves no -o file, partial or temporary.
    @Test func failureMidBodyLeavesNoFile() async throws {
        let good = Lab.pki.servers["good"]!
        let server = try await LabFaultServer.start(.closeMidBody, host: "good.lab.test", chain: good.chain, privateKey: good.privateKey)
        try await withTeardown({ try? await server.shutdown() }) {
            let dir = try temporaryDirectory()
            let (status, _, err) = try await run(
                CLI.binary,
                [
                    "get", server.baseURL + "/", "--resolve", "good.lab.test:\(server.port):127.0.0.1",
                    "--cacert", CLI.lab + "/roots.pem", "-o", dir + "/out",
                ])
            // curl's CURLE_PARTIAL_FILE: the server closed in order before the announced length.
            #expect(status == 18, "\(err)")
            #expect(err.contains("before the end of the response body"), "\(err)")
            #expect(filesIn(dir).isEmpty)
        }
    }

    /// curl's --max-filesize: exit 63, whether the size is announced or only seen while reading.
    @Test func maxFilesizeIsExit63() async throws {
        let server = try await LabServer.startPlain(name: "plain")
        try await withTeardown({ try? await server.shutdown() }) {
            let dir = try temporaryDirectory()
            let (announced, _, err) = try await run(CLI.binary, plainArguments(server, "/bytes/100000") + ["--max-filesize", "1000", "-o", dir + "/out"])
            #expect(announced == 63)
            #expect(err.contains("Maximum file size exceeded"))
            #expect(try await run(CLI.binary, plainArguments(server, "/bytes/1000") + ["--max-filesize", "1000", "-o", "/dev/null"]).0 == 0)
            let unannounced = try TrickleServer(total: 200_000, announcesLength: false, first: 200_000, interval: 0.01)
            defer { unannounced.stop() }
            #expect(try await run(CLI.binary, ["get", unannounced.baseURL + "/", "--max-filesize", "1000", "-o", dir + "/out"]).0 == 63)
            #expect(filesIn(dir).isEmpty)
        }
    }

    /// curl's -O: the file is named after the URL's last path segment, in the current folder.
    @Test func remoteNameUsesTheLastPathSegment() async throws {
        let server = try await LabServer.startPlain(name: "plain")
        try await withTeardown({ try? await server.shutdown() }) {
            let dir = try temporaryDirectory()
            let command = ([CLI.binary] + plainArguments(server, "/bytes/1234?x=1") + ["-O"]).map { "'\($0)'" }.joined(separator: " ")
            let (status, _, err) = try await run("/bin/sh", ["-c", "cd '\(dir)' && " + command])
            #expect(status == 0, "\(err)")
            #expect(filesIn(dir) == ["1234"])
            #expect((try? FileManager.default.attributesOfItem(atPath: dir + "/1234")[.size] as? Int) == 1234)
            let (noName, _, noNameErr) = try await run(CLI.binary, plainArguments(server, "/") + ["-O"])
            #expect(noName == 23)
            #expect(noNameErr.contains("Remote file name has no length"))
        }
    }
}

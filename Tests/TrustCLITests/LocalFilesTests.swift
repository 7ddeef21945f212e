import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Local files: private keys written 0600 from their first byte, and input files (`--cacert`, `--config`,
/// `--crlfile`) read bounded — no FIFO waited on forever, no device or oversized file read into memory — with a
/// configuration that other users could write refused, as ssh refuses its own.
@Suite("Local files: key modes, bounded reading, configuration ownership", .serialized, .timeLimit(.minutes(5)), .paced)
struct LocalFilesTests {
    /// Under umask 000 (every file the process makes would be world-writable by default), every file `trust lab-pki`
    /// creates is created with open(O_CREAT|O_EXCL, 0600) — seen in the system calls, with strace — and the keys end
    /// 0600, the certificates 0644, the folders 0755, with no temporary file left. Foundation's atomic write created
    /// each key's temporary file 0666 and chmod-ed it to 0600 only after the rename. Without strace the test is
    /// skipped, and says so (`.ci/run` installs it); a trace without a single open is an issue, not a pass.
    @Test(.requires(.strace)) func labKeysArePrivateFromTheirFirstByte() async throws {
        let dir = try temporaryDirectory() + "/lab"
        defer { try? FileManager.default.removeItem(atPath: (dir as NSString).deletingLastPathComponent) }
        let trace = dir + ".strace"
        let command = "umask 000; exec '\(CLI.binary)' lab-pki '\(dir)'"
        let (status, _, err) = try await run(
            "/bin/sh", ["-c", "'\(ExternalTool.strace.path)' -f -qq -e trace=open,openat,creat -o '\(trace)' sh -c \"\(command)\""])
        #expect(status == 0, "\(err)")
        let calls = (try? String(contentsOfFile: trace, encoding: .utf8)) ?? ""
        if !(calls.contains("openat") || calls.contains("open(")) {
            Issue.record("strace saw no open: the first bytes were not checked (\(err))")
        } else {
            let creations = calls.split(separator: "\n").filter { $0.contains(dir) && $0.contains("O_CREAT") }
            #expect(creations.count >= 40, "\(creations.count) files created")
            for line in creations {
                #expect(line.contains("O_EXCL") && line.contains(", 0600)"), "created without 0600/O_EXCL: \(line)")
            }
        }
        var keys = 0
        let enumerator = FileManager.default.enumerator(atPath: dir)
        while let relative = enumerator?.nextObject() as? String {
            var info = stat()
            #expect(lstat(dir + "/" + relative, &info) == 0)
            let mode = Int(info.st_mode & 0o7777)
            #expect(!(relative as NSString).lastPathComponent.hasPrefix("."), "left over: \(relative)")
            if info.st_mode & S_IFMT == S_IFDIR {
                #expect(mode == 0o755, "\(relative): \(String(mode, radix: 8))")
            } else if relative.hasSuffix("key.pem") {
                keys += 1
                #expect(mode == 0o600, "\(relative): \(String(mode, radix: 8))")
            } else {
                #expect(mode == 0o644, "\(relative): \(String(mode, radix: 8))")
            }
        }
        #expect(keys >= 20)
    }

    /// A FIFO with no writer, `/dev/zero` and a file over the limit, as `--cacert`, `--config` and `--crlfile` (and a
    /// FIFO as `--cert`, `--ct-log-list`, `--netrc-file`, `-w @FILE`, `pin`, `import`): a device or an oversized file
    /// is refused at once with its reason (`--cacert`/`--config`: exit 2; `--crlfile`: curl's 82), a FIFO is read
    /// within `LocalFile.pipeDeadline` (5 s) and, when no writer comes, refused then. Before, a FIFO blocked the
    /// command forever in open(2), and `/dev/zero` was read until memory ran out.
    @Test func specialAndOversizedInputFilesAreRefused() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fifo = dir + "/fifo.pem"
        #expect(mkfifo(fifo, 0o600) == 0)
        // Sparse files one byte over each limit (no disk used).
        func sparse(_ name: String, size: Int) -> String {
            let path = dir + "/" + name
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            #expect(descriptor >= 0 && ftruncate(descriptor, off_t(size)) == 0)
            close(descriptor)
            return path
        }
        let url = "https://127.0.0.1:9/"  // never reached: every case fails while loading its files
        let timedOut = "a FIFO or pipe that gave no end of data within 5 seconds"
        let fifoCases: [(String, [String], Int32, String)] = [
            ("--cacert FIFO", ["get", url, "--cacert", fifo], 2, timedOut),
            ("--config FIFO", ["get", url, "--config", fifo], 2, timedOut),
            ("check-config FIFO", ["check-config", fifo], 2, timedOut),
            ("--crlfile FIFO", ["get", url, "--crlfile", fifo], 82, timedOut),
            ("--cert FIFO", ["get", url, "--cert", fifo], 58, "cannot read the file"),
            ("--ct-log-list FIFO", ["get", url, "--ct", "enforce", "--ct-log-list", fifo], 2, timedOut),
            ("--netrc-file FIFO", ["get", url, "--netrc-file", fifo], 26, timedOut),
            ("-w @FIFO", ["get", url, "-w", "@" + fifo], 2, timedOut),
            ("pin FIFO", ["pin", fifo], 2, timedOut),
            ("import FIFO", ["import", "--from", "trustkit", fifo], 1, timedOut),
        ]
        let cases: [(String, [String], Int32, String)] = [
            ("--cacert /dev/zero", ["get", url, "--cacert", "/dev/zero"], 2, "a character device, not a regular file"),
            ("--cacert huge", ["get", url, "--cacert", sparse("huge.pem", size: (16 << 20) + 1)], 2, "larger than 16777216 bytes"),
            ("--config /dev/zero", ["get", url, "--config", "/dev/zero"], 2, "a character device, not a regular file"),
            ("--config huge", ["get", url, "--config", sparse("huge.json", size: (4 << 20) + 1)], 2, "larger than 4194304 bytes"),
            ("--crlfile /dev/zero", ["get", url, "--crlfile", "/dev/zero"], 82, "a character device, not a regular file"),
            ("--crlfile huge", ["get", url, "--crlfile", sparse("huge.crl", size: (64 << 20) + 1)], 82, "larger than 67108864 bytes"),
            ("-w @/dev/zero", ["get", url, "-w", "@/dev/zero"], 2, "a character device, not a regular file"),
            ("pin /dev/zero", ["pin", "/dev/zero"], 2, "a character device, not a regular file"),
            ("--pass file:/dev/zero", ["get", url, "--cert", dir + "/missing.p12", "--pass", "file:/dev/zero"], 58, "a character device, not a regular file"),
        ]
        // The FIFO cases all at once: each only waits out its deadline, in poll(2). A blocked open or a read without
        // end would hold its command until the run's limit kills it (and the status shows it).
        let fifoResults = try await withThrowingTaskGroup(of: (String, Int32, String, Int32, String).self) { group in
            for (name, arguments, expected, reason) in fifoCases {
                group.addTask {
                    let (status, _, err) = try await run(CLI.binary, arguments, timeLimitSeconds: 120)
                    return (name, status, err, expected, reason)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for (name, status, err, expected, reason) in fifoResults {
            #expect(status == expected && err.contains(reason), "\(name): \(status) \(err)")
        }
        for (name, arguments, expected, reason) in cases {
            let (status, _, err) = try await run(CLI.binary, arguments, timeLimitSeconds: 60)
            #expect(status == expected && err.contains(reason), "\(name): \(status) \(err)")
        }
        // A message quoting a path with terminal controls in it (the user's own input, or a name a server chose for
        // an -O file) shows them escaped: every line of diagnostics goes through the last line of defence.
        let hostile = dir + "/x\u{1B}]0;pwned\u{7}\u{9B}2J.pem"
        try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: hostile))
        let (hostileStatus, _, hostileErr) = try await run(CLI.binary, ["get", url, "--cacert", hostile])
        #expect(hostileStatus == 2 && hostileErr.contains("x\\x1b]0;pwned\\x07\\u{009B}2J.pem"), "\(hostileStatus) \(hostileErr)")
        #expect(!DisplayText.containsUnsafeCharacter(hostileErr.replacingOccurrences(of: "\n", with: "")), "\(hostileErr)")
        // System roots from SSL_CERT_FILE naming a FIFO nobody writes to: skipped at its deadline (no anchor, the chain
        // refused); one in SSL_CERT_DIR is skipped at once.
        let (status, _, err) = try await run(
            "/usr/bin/env",
            [
                "SSL_CERT_FILE=" + fifo, "SSL_CERT_DIR=" + dir, CLI.binary, "evaluate",
                "--chain", CLI.lab + "/good/chain.pem", "--host", "good.lab.test",
            ], timeLimitSeconds: 60)
        #expect(status == 1, "SSL_CERT_FILE FIFO: \(status) \(err)")
    }

    /// A shell's process substitution (`<(command)`: a pipe at `/dev/fd/N`) as `--cacert`, `--netrc-file` and
    /// `--pass file:`, and a named FIFO whose writer comes after `trust` opened it: read within the deadline, the
    /// request succeeds. Before, each was refused as "a FIFO, not a regular file".
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/bin/bash"), "process substitution needs bash"))
    func pipesAndFIFOsWithAWriterAreRead() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let dir = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let roots = CLI.lab + "/roots.pem"
            let get = "'\(CLI.binary)' get -s -S '\(good.baseURL)/basic' --resolve '\(good.host):\(good.port):127.0.0.1'"
            let substituted = get + " --cacert <(cat '\(roots)') --netrc-file <(printf 'machine %s login alice password wonderland\\r\\n' '\(good.host)')"
            let (status, out, err) = try await run("/bin/bash", ["-c", substituted], timeLimitSeconds: 120)
            #expect(status == 0 && out.contains("authenticated alice via"), "\(status) \(out) \(err)")
            // --pass file:<(…): the passphrase's first line, read from the pipe (a wrong one for a missing --cert
            // would be the next error: here the file is missing, so reading --pass came first and passed).
            let pass = "'\(CLI.binary)' get -s -S https://127.0.0.1:9/ --cert '\(dir)/missing.p12' --pass file:<(printf 'P12Secret-42\\nmore\\n')"
            let (passStatus, _, passErr) = try await run("/bin/bash", ["-c", pass], timeLimitSeconds: 120)
            #expect(passStatus == 58 && !passErr.contains("--pass") && !passErr.contains("P12Secret-42"), "\(passStatus) \(passErr)")
            #if os(Linux)
                // A named FIFO: on Linux poll(2) waits for a writer that has not opened it yet, so the order in which the
                // writer and `trust` open it does not matter.
                let fifo = dir + "/roots.fifo"
                #expect(mkfifo(fifo, 0o600) == 0)
                let named = "cat '\(roots)' > '\(fifo)' & " + get + " --cacert '\(fifo)' -u alice:wonderland; status=$?; wait; exit $status"
                let (namedStatus, namedOut, namedErr) = try await run("/bin/bash", ["-c", named], timeLimitSeconds: 120)
                #expect(namedStatus == 0 && namedOut.contains("authenticated alice via"), "\(namedStatus) \(namedOut) \(namedErr)")
            #endif
        }
    }

    /// A configuration file another user could write decides whom `trust` trusts: refused as ssh refuses its own
    /// (group- or world-writable, or owned by another user but root), with a typed ``LocalFileError``. Before, any
    /// such file was used.
    @Test func configurationWritableByOthersIsRefused() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/trust.json"
        try
            #"{"version": 1, "hosts": [{"host": "good.lab.test", "pins": {"sha256": ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "sha256/BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB="]}}]}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o644)
        #expect(try await run(CLI.binary, ["check-config", path]).0 == 0)
        for mode: mode_t in [0o664, 0o646, 0o666] {
            chmod(path, mode)
            let (status, _, err) = try await run(CLI.binary, ["check-config", path])
            #expect(status == 2 && err.contains("writable by other users (mode \(String(mode, radix: 8)))"), "\(String(mode, radix: 8)): \(status) \(err)")
            let (getStatus, _, getErr) = try await run(CLI.binary, ["get", "https://127.0.0.1:9/", "--config", path])
            #expect(getStatus == 2 && getErr.contains("writable by other users"), "\(getStatus) \(getErr)")
            do {
                _ = try TrustConfiguration.load(contentsOf: path)
                Issue.record("mode \(String(mode, radix: 8)) loaded")
            } catch {
                #expect(error.fileError?.kind == .writableByOthers(mode: Int(mode)))
            }
        }
        chmod(path, 0o644)
        // Owned by another user (only root can give a file away).
        if geteuid() == 0 {
            #expect(chown(path, 12345, 12345) == 0)
            let (status, _, err) = try await run(CLI.binary, ["check-config", path])
            #expect(status == 2 && err.contains("owned by another user (uid 12345)"), "\(status) \(err)")
            #expect(chown(path, 0, 0) == 0)
            #expect(try await run(CLI.binary, ["check-config", path]).0 == 0)
        }
    }
}

import Foundation
import Testing
import Trust
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
        let (status, _, err) = try await run("/bin/sh", ["-c", "'\(ExternalTool.strace.path)' -f -qq -e trace=open,openat,creat -o '\(trace)' sh -c \"\(command)\""])
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
    /// FIFO as `--cert` and `--ct-log-list`): each
    /// refused at once with its reason (`--cacert`/`--config`: exit 2; `--crlfile`: curl's 82). Before, a FIFO
    /// blocked the command forever in open(2), and `/dev/zero` was read until memory ran out.
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
        let cases: [(String, [String], Int32, String)] = [
            ("--cacert FIFO", ["get", url, "--cacert", fifo], 2, "a FIFO, not a regular file"),
            ("--cacert /dev/zero", ["get", url, "--cacert", "/dev/zero"], 2, "a character device, not a regular file"),
            ("--cacert huge", ["get", url, "--cacert", sparse("huge.pem", size: (16 << 20) + 1)], 2, "larger than 16777216 bytes"),
            ("--config FIFO", ["get", url, "--config", fifo], 2, "a FIFO, not a regular file"),
            ("--config /dev/zero", ["get", url, "--config", "/dev/zero"], 2, "a character device, not a regular file"),
            ("--config huge", ["get", url, "--config", sparse("huge.json", size: (4 << 20) + 1)], 2, "larger than 4194304 bytes"),
            ("check-config FIFO", ["check-config", fifo], 2, "a FIFO, not a regular file"),
            ("--crlfile FIFO", ["get", url, "--crlfile", fifo], 82, "a FIFO, not a regular file"),
            ("--crlfile /dev/zero", ["get", url, "--crlfile", "/dev/zero"], 82, "a character device, not a regular file"),
            ("--crlfile huge", ["get", url, "--crlfile", sparse("huge.crl", size: (64 << 20) + 1)], 82, "larger than 67108864 bytes"),
            ("--cert FIFO", ["get", url, "--cert", fifo], 58, "cannot read the file"),
            ("--ct-log-list FIFO", ["get", url, "--ct", "enforce", "--ct-log-list", fifo], 2, "a FIFO, not a regular file"),
            ("--netrc-file FIFO", ["get", url, "--netrc-file", fifo], 26, "a FIFO, not a regular file"),
            ("-w @FIFO", ["get", url, "-w", "@" + fifo], 2, "a FIFO, not a regular file"),
            ("-w @/dev/zero", ["get", url, "-w", "@/dev/zero"], 2, "a character device, not a regular file"),
            ("pin FIFO", ["pin", fifo], 2, "a FIFO, not a regular file"),
            ("pin /dev/zero", ["pin", "/dev/zero"], 2, "a character device, not a regular file"),
            ("import FIFO", ["import", "--from", "trustkit", fifo], 1, "a FIFO, not a regular file"),
        ]
        for (name, arguments, expected, reason) in cases {
            // A blocked open would hold the command until it is killed (and the status shows it).
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
        // System roots from SSL_CERT_FILE naming a FIFO: skipped (no anchor, the chain refused), never waited on.
        let (status, _, err) = try await run("/usr/bin/env", ["SSL_CERT_FILE=" + fifo, "SSL_CERT_DIR=" + dir, CLI.binary, "evaluate",
                                                              "--chain", CLI.lab + "/good/chain.pem", "--host", "good.lab.test"], timeLimitSeconds: 60)
        #expect(status == 1, "SSL_CERT_FILE FIFO: \(status) \(err)")
    }

    /// A configuration file another user could write decides whom `trust` trusts: refused as ssh refuses its own
    /// (group- or world-writable, or owned by another user but root), with a typed ``LocalFileError``. Before, any
    /// such file was used.
    @Test func configurationWritableByOthersIsRefused() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/trust.json"
        try #"{"version": 1, "hosts": [{"host": "good.lab.test", "pins": {"sha256": ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "sha256/BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB="]}}]}"#
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

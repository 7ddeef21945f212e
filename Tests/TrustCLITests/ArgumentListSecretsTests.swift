import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// While `trust get` runs, its argument list (`/proc/PID/cmdline`, what `ps` shows every local user)
/// holds no password, passphrase, credential header value or URL user-info: each flag, in each
/// spelling the parser accepts, is read by a child whose request a 127.0.0.1 server holds open.
/// The non-secret parts (a user name, a file path, a host) are still there, so the read is shown to work.
@Suite("trust get's secrets leave its argument list", .serialized, .timeLimit(.minutes(5)), .paced)
struct ArgumentListSecretsTests {
    /// The arguments of a running `trust get ARGUMENTS` (as /proc/PID/cmdline shows them), read once
    /// its request has reached `server`; the child is then ended.
    func argumentsInFlight(_ arguments: [String], server: HoldingServer, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let before = server.requestHeads.count
        let child = try SpawnedCommand(CLI.binary, ["get", "-s", "-S", "-m", "120"] + arguments, stdout: dir + "/out", stderr: dir + "/err")
        let arrived =
            await eventually(seconds: 60) { server.requestHeads.count > before || Self.hasExited(child.pid) }
            && server.requestHeads.count > before
        let cmdline = Self.commandLine(of: child.pid)
        kill(child.pid, SIGKILL)
        _ = await child.wait(limit: 30)
        #expect(arrived, "the request never reached the server: \(child.stderrText)", sourceLocation: sourceLocation)
        #expect(cmdline.count == arguments.count + 6, "\(cmdline)", sourceLocation: sourceLocation)
        return cmdline
    }

    /// Whether `pid` has ended (a zombie not yet waited for: state `Z` in /proc/PID/stat).
    static func hasExited(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    /// /proc/PID/cmdline split at its NULs.
    static func commandLine(of pid: pid_t) -> [String] {
        guard let handle = FileHandle(forReadingAtPath: "/proc/\(pid)/cmdline") else { return [] }
        defer { try? handle.close() }
        let data = handle.readDataToEndOfFile()
        return data.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
    }

    /// No argument holds `secret` (searched by byte); `kept` (each) is still there.
    func expectScrubbed(_ cmdline: [String], absent secrets: [String], present kept: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let joined = Data(cmdline.joined(separator: "\u{0}").utf8)
        for secret in secrets {
            #expect(joined.range(of: Data(secret.utf8)) == nil, "argv shows \(secret): \(cmdline)", sourceLocation: sourceLocation)
        }
        for text in kept {
            #expect(joined.range(of: Data(text.utf8)) != nil, "argv lost \(text): \(cmdline)", sourceLocation: sourceLocation)
        }
    }

    func withHoldingServer(_ body: (HoldingServer) async throws -> Void) async throws {
        let server = try HoldingServer()
        defer { server.stop() }
        try await body(server)
    }

    @Test func userFlag() async throws {
        try await withHoldingServer { server in
            let url = server.baseURL + "/"
            for spelling in [
                ["-u", "alice:ArgSecret-u1"], ["--user", "alice:ArgSecret-u1"], ["--user=alice:ArgSecret-u1"], ["-u=alice:ArgSecret-u1"],
                ["-ku", "alice:ArgSecret-u1"], ["-uk", "alice:ArgSecret-u1"], ["-Xu", "GET", "alice:ArgSecret-u1"],
                ["-u", "alice:ArgSecret-u0", "-u", "alice:ArgSecret-u1"],
            ] {
                let cmdline = try await argumentsInFlight([url] + spelling, server: server)
                expectScrubbed(cmdline, absent: ["ArgSecret-u1", "ArgSecret-u0"], present: ["alice:", url])
            }
        }
    }

    @Test func proxyUserFlag() async throws {
        try await withHoldingServer { server in
            for spelling in [["-U", "carol:ArgSecret-U1"], ["--proxy-user", "carol:ArgSecret-U1"], ["--proxy-user=carol:ArgSecret-U1"]] {
                let cmdline = try await argumentsInFlight(["http://origin.invalid/", "-x", server.baseURL] + spelling, server: server)
                expectScrubbed(cmdline, absent: ["ArgSecret-U1"], present: ["carol:", server.baseURL])
            }
        }
    }

    /// `--pass`/`--cert-password` with a PKCS#12 file they open (a wrong one would end the command before any request).
    @Test(.requires(.openssl)) func passFlag() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p12 = try await labClientPKCS12(password: "ArgSecret-p1", in: dir)
        try await withHoldingServer { server in
            for spelling in [["--pass", "ArgSecret-p1"], ["--cert-password", "ArgSecret-p1"], ["--pass=ArgSecret-p1"], ["--pass", "pass:ArgSecret-p1"]] {
                let cmdline = try await argumentsInFlight([server.baseURL + "/", "--cert", p12] + spelling, server: server)
                expectScrubbed(cmdline, absent: ["ArgSecret-p1"], present: [p12])
            }
        }
    }

    @Test(.requires(.openssl)) func certInlinePassword() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p12 = try await labClientPKCS12(password: "ArgSecret-c1", in: dir)
        try await withHoldingServer { server in
            for spelling in [["--cert", p12 + ":ArgSecret-c1"], ["-E", p12 + ":ArgSecret-c1"], ["--cert=" + p12 + ":ArgSecret-c1"]] {
                let cmdline = try await argumentsInFlight([server.baseURL + "/"] + spelling, server: server)
                expectScrubbed(cmdline, absent: ["ArgSecret-c1"], present: [p12 + ":"])
            }
        }
    }

    /// `-x` user-info, with and without a scheme (curl's `-x USER:PASSWORD@HOST:PORT`): user and password both go.
    @Test func proxyURLUserInfo() async throws {
        try await withHoldingServer { server in
            let hostPort = "127.0.0.1:\(server.port)"
            for spelling in [
                ["-x", "http://pxuser-1:ArgSecret-x1@" + hostPort], ["--proxy", "pxuser-1:ArgSecret-x1@" + hostPort],
                ["--proxy=http://pxuser-1:ArgSecret-x1@" + hostPort],
            ] {
                let cmdline = try await argumentsInFlight(["http://origin.invalid/"] + spelling, server: server)
                expectScrubbed(cmdline, absent: ["ArgSecret-x1", "pxuser-1"], present: ["@" + hostPort])
            }
        }
    }

    @Test func urlUserInfo() async throws {
        try await withHoldingServer { server in
            let url = "http://urluser-1:ArgSecret-url1@127.0.0.1:\(server.port)/path"
            for arguments in [[url], ["-v", url], ["--", url]] {
                let cmdline = try await argumentsInFlight(arguments, server: server)
                expectScrubbed(cmdline, absent: ["ArgSecret-url1", "urluser-1"], present: ["@127.0.0.1:\(server.port)/path"])
            }
        }
    }

    @Test func authorizationHeaders() async throws {
        try await withHoldingServer { server in
            for spelling in [
                ["-H", "Authorization: Bearer ArgSecret-h1"], ["--header", "authorization:Basic ArgSecret-h1"],
                ["--header=Proxy-Authorization: Basic ArgSecret-h1"], ["-kH", "Authorization: Bearer ArgSecret-h1"],
                ["-H", "X-Keep: visible", "-H", "Authorization: ArgSecret-h1"],
            ] {
                let cmdline = try await argumentsInFlight([server.baseURL + "/"] + spelling, server: server)
                expectScrubbed(cmdline, absent: ["ArgSecret-h1"], present: spelling.count > 2 ? ["X-Keep: visible", "Authorization: "] : [":"])
                // The server did get the header: only the argument list lost it.
                #expect(server.requestHeads.last?.contains("ArgSecret-h1") == true || spelling[0].contains("Proxy"), "\(server.requestHeads.last ?? "")")
            }
        }
    }

    // MARK: Secrets never on the command line

    func lab(_ server: LabServer) -> [String] {
        ["--resolve", "\(server.host):\(server.port):127.0.0.1", "--cacert", CLI.lab + "/roots.pem"]
    }

    /// Runs `arguments` under a new pseudo-terminal (its controlling terminal) with python3's `pty`: waits for
    /// `prompt`, then types `answer` and a return (`answer` mode) or sends SIGINT (`interrupt` mode).
    /// Prints one line `prompt-seen=… echo-during=… echo-after=… status=…` (the terminal's ECHO flag while the
    /// prompt waits and once the child is done), then everything the terminal showed.
    static let ptyDriver = """
        import os, pty, sys, time, select, termios, signal
        mode, prompt, answer = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
        pid, fd = pty.fork()
        if pid == 0:
            # As from a login shell: no signal blocked or ignored (a test runner's own settings are inherited through exec).
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
                signal.signal(number, signal.SIG_DFL)
            os.execv(sys.argv[4], sys.argv[4:])
        out = b""
        def pump(until, seconds):
            global out
            deadline = time.time() + seconds
            while time.time() < deadline:
                if until and until in out: return True
                r, _, _ = select.select([fd], [], [], 0.2)
                if r:
                    try: data = os.read(fd, 4096)
                    except OSError: return False
                    if not data: return False
                    out += data
            return bool(until) and until in out
        seen = pump(prompt, 60)
        time.sleep(0.3)
        echo_during = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
        if mode == "answer":
            os.write(fd, answer + b"\\n")
            pump(None, 60)
        else:
            os.kill(pid, signal.SIGINT)
        _, status = os.waitpid(pid, 0)
        echo_after = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
        print("prompt-seen=%s echo-during=%s echo-after=%s status=%d" % (seen, echo_during, echo_after, status))
        sys.stdout.write(out.decode("utf-8", "replace"))
        """

    /// `-u USER` on a terminal: curl's prompt, no echo, the password typed reaches the server (and only it).
    @Test(.requires(.python3)) func promptOnTerminal() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let prompt = "Enter host password for user 'alice':"
            let (status, out, err) = try await run(
                ExternalTool.python3.path,
                [
                    "-c", Self.ptyDriver, "answer", prompt, "wonderland",
                    CLI.binary, "get", good.baseURL + "/basic", "-u", "alice",
                ] + lab(good))
            #expect(status == 0, "\(err)")
            #expect(out.hasPrefix("prompt-seen=True echo-during=False echo-after=True status=0"), "\(out)")
            #expect(out.contains("authenticated alice via"), "\(out)")
            // The terminal showed the prompt but never the password: echo was off while it was typed.
            #expect(!out.contains("wonderland"), "\(out)")
        }
    }

    /// `-U USER`: curl's proxy prompt.
    @Test(.requires(.python3)) func proxyPromptOnTerminal() async throws {
        let proxy = try await LabProxy.start(authentication: .basic)
        try await withTeardown({ try? await proxy.shutdown() }) {
            try await withLabServers(["good"]) { servers in
                let good = servers["good"]!
                let prompt = "Enter proxy password for user 'alice':"
                let (status, out, err) = try await run(
                    ExternalTool.python3.path,
                    [
                        "-c", Self.ptyDriver, "answer", prompt, "wonderland",
                        CLI.binary, "get", good.baseURL + "/", "-x", proxy.url, "-U", "alice",
                    ] + lab(good))
                #expect(status == 0, "\(err)")
                #expect(out.hasPrefix("prompt-seen=True echo-during=False echo-after=True status=0"), "\(out)")
                #expect(out.contains("hello from good"), "\(out)")
                #expect(!out.contains("wonderland"), "\(out)")
            }
        }
    }

    /// Ctrl-C at the prompt ends the command by SIGINT, and the terminal has its echo back.
    @Test(.requires(.python3)) func promptInterruptedRestoresEcho() async throws {
        let prompt = "Enter host password for user 'alice':"
        let (status, out, err) = try await run(
            ExternalTool.python3.path,
            [
                "-c", Self.ptyDriver, "interrupt", prompt, "",
                CLI.binary, "get", "https://127.0.0.1:1/", "-u", "alice",
            ])
        #expect(status == 0, "\(err)")
        // status 2: ended by signal 2 (SIGINT), as without the prompt's handler.
        #expect(out.hasPrefix("prompt-seen=True echo-during=False echo-after=True status=2"), "\(out)")
    }

    /// No terminal at all (a new session, as under cron or CI): curl reads the password from standard
    /// input, and an empty input is an empty password.
    @Test func promptWithoutTerminalReadsStandardInput() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let arguments = [CLI.binary, "get", good.baseURL + "/basic", "-u", "alice", "-s", "-S"] + lab(good)
            // setsid --wait: a session of its own (no controlling terminal), and setsid's status is the command's.
            let piped = try await run("/usr/bin/setsid", ["--wait"] + arguments, stdin: "wonderland\n")
            #expect(piped.0 == 0, "\(piped.2)")
            #expect(piped.1.contains("authenticated alice via"), "\(piped.1)")
            #expect(piped.2.contains("Enter host password for user 'alice':"), "\(piped.2)")
            let empty = try await run("/usr/bin/setsid", ["--wait"] + arguments, stdin: "")
            #expect(empty.0 == 67, "\(empty.2)")
        }
    }

    /// `--pass env:NAME`, `file:PATH` (the first line only), `pass:TEXT`; an unreadable source is exit 58,
    /// as a wrong passphrase.
    @Test(.requires(.openssl)) func passFromEnvironmentAndFile() async throws {
        let server = try await LabServer.start(mutualTLS: .required, pki: Lab.pki)
        try await withTeardown({ try? await server.shutdown() }) {
            let dir = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let p12 = try await labClientPKCS12(password: "FileSecret-1", in: dir)
            try "FileSecret-1\nsecond line\n".write(toFile: dir + "/pass", atomically: true, encoding: .utf8)
            try "FileSecret-1".write(toFile: dir + "/pass-no-newline", atomically: true, encoding: .utf8)
            try String(repeating: "x", count: 2000).write(toFile: dir + "/long", atomically: true, encoding: .utf8)
            let url = server.baseURL + "/whoami"
            for source in ["file:" + dir + "/pass", "file:" + dir + "/pass-no-newline", "env:TRUST_TEST_P12_PASS", "pass:FileSecret-1"] {
                let (status, out, err) = try await run(
                    "/usr/bin/env",
                    [
                        "TRUST_TEST_P12_PASS=FileSecret-1", CLI.binary, "get", url, "--cert", p12,
                        "--pass", source, "-s", "-S",
                    ] + lab(server))
                #expect(status == 0 && out.contains("client: "), "\(source): \(err)")
            }
            for (source, message) in [
                ("env:TRUST_TEST_UNSET_VARIABLE", "no such environment variable"), ("file:" + dir + "/missing", "cannot read"),
                ("file:" + dir + "/long", "longer than 1024 bytes"), ("env:TRUST_TEST_P12_WRONG", "wrong passphrase"),
            ] {
                let (status, _, err) = try await run(
                    "/usr/bin/env",
                    [
                        "TRUST_TEST_P12_WRONG=WrongSecret-1", CLI.binary, "get", url, "--cert", p12,
                        "--pass", source, "-s", "-S",
                    ] + lab(server))
                #expect(status == 58, "\(source): \(err)")
                #expect(err.contains(message), "\(source): \(err)")
                #expect(!err.contains("WrongSecret-1"), "\(err)")
            }
        }
    }
}

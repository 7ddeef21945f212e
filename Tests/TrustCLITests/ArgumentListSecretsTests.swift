import Foundation
import Testing
import TrustLab
import TrustHTTPTestSupport
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
        let arrived = await eventually(seconds: 60) { server.requestHeads.count > before || Self.hasExited(child.pid) }
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
            for spelling in [["-u", "alice:ArgSecret-u1"], ["--user", "alice:ArgSecret-u1"], ["--user=alice:ArgSecret-u1"], ["-u=alice:ArgSecret-u1"],
                             ["-ku", "alice:ArgSecret-u1"], ["-u", "alice:ArgSecret-u0", "-u", "alice:ArgSecret-u1"]] {
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
    @Test func passFlag() async throws {
        let p12 = try await pkcs12(password: "ArgSecret-p1")
        try await withHoldingServer { server in
            for spelling in [["--pass", "ArgSecret-p1"], ["--cert-password", "ArgSecret-p1"], ["--pass=ArgSecret-p1"], ["--pass", "pass:ArgSecret-p1"]] {
                let cmdline = try await argumentsInFlight([server.baseURL + "/", "--cert", p12] + spelling, server: server)
                expectScrubbed(cmdline, absent: ["ArgSecret-p1"], present: [p12])
            }
        }
    }

    @Test func certInlinePassword() async throws {
        let p12 = try await pkcs12(password: "ArgSecret-c1")
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
            for spelling in [["-x", "http://pxuser-1:ArgSecret-x1@" + hostPort], ["--proxy", "pxuser-1:ArgSecret-x1@" + hostPort],
                             ["--proxy=http://pxuser-1:ArgSecret-x1@" + hostPort]] {
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
            for spelling in [["-H", "Authorization: Bearer ArgSecret-h1"], ["--header", "authorization:Basic ArgSecret-h1"],
                             ["--header=Proxy-Authorization: Basic ArgSecret-h1"], ["-H", "X-Keep: visible", "-H", "Authorization: ArgSecret-h1"]] {
                let cmdline = try await argumentsInFlight([server.baseURL + "/"] + spelling, server: server)
                expectScrubbed(cmdline, absent: ["ArgSecret-h1"], present: spelling.count > 2 ? ["X-Keep: visible", "Authorization: "] : [":"])
                // The server did get the header: only the argument list lost it.
                #expect(server.requestHeads.last?.contains("ArgSecret-h1") == true || spelling[0].contains("Proxy"), "\(server.requestHeads.last ?? "")")
            }
        }
    }

    /// A PKCS#12 file of the lab's client identity, protected by `password` (made by openssl).
    func pkcs12(password: String) async throws -> String {
        let path = try temporaryDirectory() + "/client.p12"
        let client = CLI.lab + "/clients/client"
        let (status, _, err) = try await run("/usr/bin/openssl", ["pkcs12", "-export", "-in", client + "/chain.pem", "-inkey", client + "/key.pem",
                                                                  "-out", path, "-passout", "pass:" + password])
        #expect(status == 0, "\(err)")
        return path
    }
}

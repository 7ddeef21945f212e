import Foundation
import Testing
import Trust
import TrustHTTP
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// HTTP authentication against implementations we did not write: curl and Python's requests as
/// clients of our lab server, and our client against a Digest server in Python; plus the CLI contract.
@Suite("HTTP authentication: CLI, curl, Python", .serialized, .timeLimit(.minutes(5)), .paced)
struct HTTPAuthenticationInteropTests {
    static let curl = "/usr/bin/curl"
    static let python = "/usr/bin/python3"

    func trustGet(_ server: LabServer, _ path: String, _ extra: [String]) async throws -> (Int32, String, String) {
        try await run(
            CLI.binary, ["get", server.baseURL + path, "--resolve", "\(server.host):\(server.port):127.0.0.1", "--cacert", CLI.lab + "/roots.pem"] + extra)
    }

    @Test func cliFlagsAndExitCodes() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki)
        try await withTeardown({ try? await server.shutdown() }) {
            let (status, out, _) = try await trustGet(server, "/digest?algorithm=SHA-256", ["--user", "alice:wonderland"])
            #expect(status == 0)
            #expect(out == "authenticated alice via Digest SHA-256\n")
            #expect(try await trustGet(server, "/multi", ["-u", "alice:wonderland"]).1 == "authenticated alice via Digest SHA-256\n")
            #expect(try await trustGet(server, "/multi", ["-u", "alice:wonderland", "--basic"]).1 == "authenticated alice via Basic\n")
            #expect(try await trustGet(server, "/digest?algorithm=SHA-256", ["--user", "alice:wrong"]).0 == 67)
            #expect(try await trustGet(server, "/digest", ["--user", "alice:wonderland", "--basic"]).0 == 67)  // Basic only; Digest asked
            #expect(try await trustGet(server, "/basic", ["--user", "alice:wonderland", "--digest"]).0 == 67)
            #expect(try await trustGet(server, "/basic", ["--user", "alice:wonderland", "--any-auth"]).0 == 0)
            #expect(try await trustGet(server, "/basic", []).0 == 0)  // no --user: a 401 is just a response (22 with --fail)
            #expect(try await trustGet(server, "/basic", ["--fail"]).0 == 22)
            // --user USER prompts (curl's); with no terminal (a session of its own) and empty input, the password is empty (67).
            let prompted = try await run(
                "/usr/bin/setsid",
                [
                    "--wait", CLI.binary, "get", server.baseURL + "/basic", "--resolve", "\(server.host):\(server.port):127.0.0.1",
                    "--cacert", CLI.lab + "/roots.pem", "--user", "alice",
                ], stdin: "")
            #expect(prompted.0 == 67 && prompted.2.contains("Enter host password for user 'alice':"), "\(prompted.2)")
            #expect(try await trustGet(server, "/basic", ["--user", "a:b", "--basic", "--digest"]).0 == 2)
            // -v: the challenge, the scheme chosen, the user — never the password.
            let (_, _, verbose) = try await trustGet(server, "/digest?algorithm=SHA-512-256", ["-u", "alice:wonderland", "-v"])
            #expect(verbose.contains("challenge: httpDigest"), "\(verbose)")
            #expect(verbose.contains("offered: Digest"))
            #expect(verbose.contains("answering with Digest SHA-512-256 as alice"))
            #expect(!verbose.contains("wonderland"))
            // Plain http: Basic refused (67) unless allowed.
            let plain = try await LabServer.startPlain(name: "plain")
            try await withTeardown({ try? await plain.shutdown() }) {
                let base = ["get", plain.baseURL + "/basic", "--resolve", "\(plain.host):\(plain.port):127.0.0.1", "-u", "alice:wonderland"]
                let (refused, _, why) = try await run(CLI.binary, base)
                #expect(refused == 67)
                #expect(why.contains("clear text"))
                #expect(try await run(CLI.binary, base + ["--allow-cleartext-auth"]).0 == 0)
            }
        }
    }

    @Test(.requires(.curl)) func curlDigestAgainstOurServer() async throws {
        let server = try await LabServer.start("good", pki: Lab.pki, protocols: .http1Only)
        try await withTeardown({ try? await server.shutdown() }) {
            // Debian's curl 7.88 computes SHA-512-256 with SHA-256 (checked against RFC 7616 §3.9.2 instead).
            for algorithm in ["MD5", "MD5-sess", "SHA-256", "SHA-256-sess"] {
                for userhash in [false, true] {
                    let path = "/digest?algorithm=\(algorithm)" + (userhash ? "&userhash=1" : "")
                    let (status, out, err) = try await run(
                        Self.curl,
                        [
                            "-sS", "--digest", "-u", "alice:wonderland", "--cacert", CLI.lab + "/roots.pem",
                            "--resolve", "good.lab.test:\(server.port):127.0.0.1", server.baseURL + path,
                        ])
                    #expect(status == 0, "\(err)")
                    #expect(out == "authenticated alice via Digest \(algorithm)\n", "\(path): \(out) \(err)")
                }
            }
            let (_, wrong, _) = try await run(
                Self.curl,
                [
                    "-sS", "--digest", "-u", "alice:nope", "--cacert", CLI.lab + "/roots.pem",
                    "--resolve", "good.lab.test:\(server.port):127.0.0.1", server.baseURL + "/digest?algorithm=SHA-256",
                ])
            #expect(wrong == "authentication required\n")
        }
    }

    @Test(.requires(.python3Requests)) func pythonRequestsDigestAgainstOurServer() async throws {
        let python = ExternalTool.python3Requests.path  // Debian's python3-requests, installed by .ci/run
        let server = try await LabServer.start("good", pki: Lab.pki, protocols: .http1Only)
        try await withTeardown({ try? await server.shutdown() }) {
            let script = """
                import sys, requests
                from requests.auth import HTTPDigestAuth
                r = requests.get(sys.argv[1], auth=HTTPDigestAuth(sys.argv[2], sys.argv[3]), verify=sys.argv[4])
                print(r.status_code, r.text.strip())
                """
            for algorithm in ["MD5", "MD5-sess", "SHA-256"] {
                let target = "https://127.0.0.1:\(server.port)/digest?algorithm=\(algorithm)"
                let (status, out, err) = try await run(python, ["-c", script, target, "alice", "wonderland", CLI.lab + "/roots.pem"])
                #expect(status == 0, "\(err)")
                #expect(out == "200 authenticated alice via Digest \(algorithm)\n", "\(algorithm): \(out) \(err)")
            }
            let (_, wrong, _) = try await run(
                python, ["-c", script, "https://127.0.0.1:\(server.port)/digest?algorithm=SHA-256", "alice", "bad", CLI.lab + "/roots.pem"])
            #expect(wrong.hasPrefix("401"))
        }
    }

    /// Our client against a Digest server written in Python (hashlib), over plain http.
    @Test(.requires(.python3Requests)) func ourClientAgainstAPythonDigestServer() async throws {
        let dir = try temporaryDirectory()
        let script = dir + "/digest_server.py"
        try Self.pythonServer.write(toFile: script, atomically: true, encoding: .utf8)
        let portFile = dir + "/port"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [script, portFile]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { stop(process) }
        var port: Int?
        for _ in 0..<100 where port == nil {
            port = (try? String(contentsOfFile: portFile, encoding: .utf8)).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            if port == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        guard let port else {
            Issue.record("the Python server did not start")
            return
        }
        let session = try TrustHTTPClient(configuration: TrustHTTPClientConfiguration())
        try await withTeardown({ await session.shutdown() }) {
            let alice = Credential(user: "alice", password: "wonderland", persistence: .none)
            for algorithm in ["MD5", "MD5-sess", "SHA-256", "SHA-256-sess", "SHA-512-256", "SHA-512-256-sess"] {
                for qop in ["auth", "auth-int"] {
                    let target = URL(string: "http://127.0.0.1:\(port)/\(algorithm)/\(qop)")!
                    let response = try await session.data(
                        for: TrustHTTPClientRequest(url: target, method: "POST", body: .text("payload"), credential: alice))
                    #expect(response.statusCode == 200, "\(algorithm) \(qop)")
                    #expect(response.text == "ok alice \(algorithm) \(qop)", "\(algorithm) \(qop): \(response.text)")
                }
            }
            let wrong = try await session.data(
                for: TrustHTTPClientRequest(
                    url: URL(string: "http://127.0.0.1:\(port)/SHA-256/auth")!, credential: Credential(user: "alice", password: "x", persistence: .none)))
            #expect(wrong.statusCode == 401)
        }
    }

    static let pythonServer = #"""
        import hashlib, http.server, os, sys, threading

        USERS = {"alice": "wonderland"}
        REALM = "python"
        NONCES = {}
        LOCK = threading.Lock()

        def H(algorithm, data):
            name = {"MD5": "md5", "SHA-256": "sha256", "SHA-512-256": "sha512_256"}[algorithm.replace("-sess", "")]
            return hashlib.new(name, data if isinstance(data, bytes) else data.encode()).hexdigest()

        def parse(value):
            out, i = {}, 0
            while i < len(value):
                while i < len(value) and value[i] in " ,\t": i += 1
                j = value.index("=", i); name = value[i:j].strip().lower(); i = j + 1
                if value[i] == '"':
                    k = i + 1; text = ""
                    while value[k] != '"':
                        if value[k] == "\\": k += 1
                        text += value[k]; k += 1
                    out[name] = text; i = k + 1
                else:
                    k = value.find(",", i); k = len(value) if k < 0 else k
                    out[name] = value[i:k].strip(); i = k
            return out

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *args): pass
            def do_POST(self): self.handle_any()
            def do_GET(self): self.handle_any()
            def reply(self, code, text, headers=()):
                body = text.encode()
                self.send_response(code)
                for k, v in headers: self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers(); self.wfile.write(body)
            def handle_any(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length) if length else b""
                _, algorithm, qop = self.path.split("/")
                auth = self.headers.get("Authorization", "")
                if auth.startswith("Digest "):
                    f = parse(auth[7:])
                    ok = False
                    with LOCK:
                        last = NONCES.get(f.get("nonce"))
                        nc = int(f.get("nc", "0"), 16)
                        if last is not None and nc > last and f.get("qop") == qop and f.get("uri") == self.path and f.get("algorithm") == algorithm:
                            NONCES[f["nonce"]] = nc
                            user = f.get("username"); pw = USERS.get(user)
                            if pw is not None:
                                a1 = H(algorithm, f"{user}:{REALM}:{pw}")
                                if algorithm.endswith("-sess"): a1 = H(algorithm, f"{a1}:{f['nonce']}:{f['cnonce']}")
                                a2 = f"{self.command}:{self.path}" + (f":{H(algorithm, body)}" if qop == "auth-int" else "")
                                expected = H(algorithm, f"{a1}:{f['nonce']}:{f['nc']}:{f['cnonce']}:{qop}:{H(algorithm, a2)}")
                                ok = expected == f.get("response")
                    if ok:
                        return self.reply(200, f"ok {f['username']} {algorithm} {qop}")
                nonce = os.urandom(16).hex()
                with LOCK: NONCES[nonce] = 0
                self.reply(401, "no", [("WWW-Authenticate", f'Digest realm="{REALM}", qop="{qop}", algorithm={algorithm}, nonce="{nonce}"')])

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        with open(sys.argv[1] + ".tmp", "w") as f: f.write(str(server.server_address[1]))
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        server.serve_forever()
        """#
}

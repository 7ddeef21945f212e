import Foundation
import Testing
import Trust
import TrustHTTPTestSupport
import TrustLab
import TrustTestSupport

/// curl's habits in `trust get`, with curl 7.88's names and meanings — compared with curl itself
/// where that is cheap.
@Suite("trust get as curl", .serialized, .timeLimit(.minutes(5)), .paced)
struct GetCommandCurlTests {
    static let curl = "/usr/bin/curl"

    func lab(_ server: LabServer) -> [String] {
        ["--resolve", "\(server.host):\(server.port):127.0.0.1", "--cacert", CLI.lab + "/roots.pem"]
    }

    /// `trust get` against a lab server. `--connect-timeout 60` (curl's default is 300 s, trust's 10 s): on a loaded
    /// machine a loopback handshake has taken over 10 s, and what these tests compare is the output, not the limit.
    func trust(_ server: LabServer, _ path: String, _ extra: [String]) async throws -> (Int32, String, String) {
        try await run(CLI.binary, ["get", server.baseURL + path, "--connect-timeout", "60"] + lab(server) + extra)
    }

    func curl(_ server: LabServer, _ path: String, _ extra: [String]) async throws -> (Int32, String, String) {
        try await run(Self.curl, ["-sS", server.baseURL + path] + lab(server) + extra)
    }

    @Test(.requires(.curl)) func includeAndHeadAsCurl() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            for version in ["--http1.1", "--http2"] {
                let (status, out, err) = try await trust(good, "/", ["-i", version])
                #expect(status == 0, "\(err)")
                #expect(out == (try await curl(good, "/", ["-i", version])).1)
                let (headStatus, head, _) = try await trust(good, "/", ["-I", version])
                #expect(headStatus == 0)
                #expect(head == (try await curl(good, "/", ["-I", version])).1)
            }
            #expect(try await trust(good, "/", ["-I", "-d", "x"]).0 == 2)
        }
    }

    /// --retry as curl 7.88: which answers are retried, the waits, curl's warning line, the bodies
    /// written (every body to stdout, only the last to -o), the exit code once retries run out.
    @Test(.requires(.curl)) func retryAsCurl() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let dir = try temporaryDirectory()
            // Each tool gets its own /flaky id: the server counts requests per id.
            func both(_ path: (String) -> String, _ extra: [String], file: Bool = false) async throws -> [(Int32, String, String, String?)] {
                var results: [(Int32, String, String, String?)] = []
                for (tool, executable, first) in [("trust", CLI.binary, ["get"]), ("curl", Self.curl, [])] {
                    let output = dir + "/\(tool)-\(UUID().uuidString)"
                    let (status, out, err) = try await run(
                        executable,
                        first + [good.baseURL + path("\(tool)-\(UUID().uuidString)")] + lab(good)
                            + ["--no-progress-meter"] + extra + (file ? ["-o", output] : []))
                    results.append((status, out, err, file ? try? String(contentsOfFile: output, encoding: .utf8) : nil))
                }
                return results
            }
            func warnings(_ stderr: String) -> [String] { stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix("Warning:") } }

            // Two 503s, then 200: three bodies on stdout, two warnings, exit 0.
            let flaky = try await both({ "/flaky?id=\($0)&fail=2" }, ["--retry", "3", "--retry-delay", "1"])
            #expect(flaky[0].0 == 0 && flaky[1].0 == 0, "\(flaky[0].2)")
            #expect(flaky[0].1 == flaky[1].1)
            #expect(flaky[0].1 == "failure 1 of 2\nfailure 2 of 2\nok after 2 failures\n")
            #expect(warnings(flaky[0].2) == warnings(flaky[1].2), "\(flaky[0].2) | \(flaky[1].2)")
            #expect(
                warnings(flaky[0].2) == [
                    "Warning: Problem : HTTP error. Will retry in 1 seconds. 3 retries left.",
                    "Warning: Problem : HTTP error. Will retry in 1 seconds. 2 retries left.",
                ])
            // 429 with Retry-After: 1, to -o: the file holds the last answer only.
            let limited = try await both({ "/flaky?id=\($0)&fail=1&status=429&retry-after=1" }, ["--retry", "1"], file: true)
            #expect(limited[0].0 == limited[1].0)
            #expect(limited[0].3 == limited[1].3)
            #expect(limited[0].3 == "ok after 1 failures\n")
            #expect(warnings(limited[0].2) == warnings(limited[1].2))
            // Out of retries under --fail: 22, no body. Not transient (404), or no --retry: no retry at all.
            let failing = try await both({ "/flaky?id=\($0)&fail=5" }, ["--retry", "1", "--retry-delay", "1", "--fail"])
            #expect(failing[0].0 == 22 && failing[1].0 == 22)
            #expect(failing[0].1 == "" && failing[1].1 == "")
            #expect(warnings(failing[0].2) == warnings(failing[1].2))
            let notFound = try await both({ "/flaky?id=\($0)&fail=1&status=404" }, ["--retry", "2"])
            #expect(notFound[0].1 == notFound[1].1)
            #expect(warnings(notFound[0].2).isEmpty && warnings(notFound[1].2).isEmpty)
            let once = try await both({ "/flaky?id=\($0)&fail=1" }, [])
            #expect(once[0].1 == "failure 1 of 1\n" && once[1].1 == once[0].1)
        }
    }

    @Test(.requires(.curl)) func writeOutAsCurl() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let format =
                "%{http_code} %{url_effective} %{num_redirects} %{remote_ip} %{remote_port} %{size_download} %{ssl_verify_result} %{http_version} %{content_type} %% \\t|%header{content-length}\\n"
            for extra in [["-o", "/dev/null"], ["-o", "/dev/null", "--http1.1"], ["-o", "/dev/null", "-d", "a=1"]] {
                let (status, out, err) = try await trust(good, "/redirect?to=/echo", ["-w", format] + extra)
                #expect(status == 0, "\(err)")
                #expect(out == (try await curl(good, "/redirect?to=/echo", ["-L", "-w", format] + extra)).1)
            }
            // Times are numbers in seconds, in order; %{stderr} switches the rest to stderr.
            let (_, out, err) = try await trust(
                good, "/", ["-o", "/dev/null", "-w", "%{time_connect} %{time_appconnect} %{time_total}%{stderr}on stderr\\n%{stdout}!"])
            let times = out.dropLast().split(separator: " ").compactMap { Double($0) }
            #expect(times.count == 3, "\(out)")
            #expect(times.count == 3 && times[0] > 0 && times[0] <= times[1] && times[1] <= times[2])
            #expect(out.hasSuffix("!"))
            // After the progress meter's last line (stderr is not a terminal, the body goes to a file: curl draws it).
            #expect(err.hasPrefix("  % Total") && err.hasSuffix("\non stderr\n"), "\(err.debugDescription)")
            // A failed transfer still writes -w: 000 as curl.
            let (failed, failedOut, _) = try await run(CLI.binary, ["get", "https://127.0.0.1:1/", "-s", "-w", "%{http_code} %{exitcode}"])
            #expect(failed == 7)
            #expect(failedOut == "000 7")
        }
    }

    /// `%{size_upload}` and `%{speed_upload}`: the body bytes sent — of a file (`-T`), of `-d`, and none
    /// when the server refuses before the body (`Expect: 100-continue` answered with 413), as curl counts them.
    @Test(.requires(.curl)) func uploadSizesAsCurl() async throws {
        let folder = try temporaryDirectory()
        let small = folder + "/small.bin"
        let large = folder + "/large.bin"
        try Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0) }).write(to: URL(filePath: small))
        try Data(count: 2 * 1024 * 1024).write(to: URL(filePath: large))
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let cases: [(String, [String], String)] = [
                ("/upload", ["-T", small], "5000"),
                ("/echo", ["-d", "a=1"], "3"),
                // Over HTTP/1.1: curl 7.88 sends `Expect` over HTTP/1.1 only. Both wait up to 30 s for the answer
                // (not the default 1 s): on a loaded machine the refusal can come later, and both would send.
                ("/expect/refuse", ["-T", large, "--http1.1", "--expect100-timeout", "30"], "0"),
                ("/", [], "0"),
            ]
            for (path, extra, expected) in cases {
                let (status, out, err) = try await trust(good, path, ["-o", "/dev/null", "-w", "%{size_upload}"] + extra)
                #expect(status == 0, "\(path): \(err)")
                #expect(out == expected, "\(path)")
                #expect(out == (try await curl(good, path, ["-o", "/dev/null", "-w", "%{size_upload}"] + extra)).1, "\(path)")
            }
            let (_, speed, _) = try await trust(good, "/upload", ["-o", "/dev/null", "-T", small, "-w", "%{speed_upload}"])
            #expect((Double(speed) ?? 0) > 0, "\(speed)")
        }
    }

    /// The progress meter on stderr, as curl 7.88's: drawn unless `-s`, `--no-progress-meter` or a body to
    /// a terminal (stderr being a file here, as in a script's `2>log`); the header, a first line as the transfer
    /// starts, a last line and a line feed, then any error on a line of its own. The last line's sizes and
    /// percentages (Total, Received, Xferd, and the upload speed of a download) are curl's for the same
    /// transfers; speeds and times are the moment's.
    @Test(.requires(.curl)) func progressMeterAsCurl() async throws {
        let small = try temporaryDirectory() + "/small.bin"
        try Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0) }).write(to: URL(filePath: small))
        let header =
            "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n"
            + "                                 Dload  Upload   Total   Spent    Left  Speed\n"
        /// The columns of the meter's last line, and whether stderr is header, lines, line feed (then anything).
        func meter(_ stderr: String) -> (columns: [String], shape: Bool) {
            guard stderr.hasPrefix(header), let end = stderr[header.endIndex...].firstIndex(of: "\n") else { return ([], false) }
            let lines = stderr[header.endIndex..<end].split(separator: "\r", omittingEmptySubsequences: false)
            // "" before the first \r, then at least the first and the last line.
            let shape = lines.count >= 3 && lines[0].isEmpty && lines.dropFirst().allSatisfy { $0.count == 78 }
            return (lines.last.map { $0.split(separator: " ").map(String.init) } ?? [], shape)
        }
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let cases: [(path: String, extra: [String], columns: [String])] = [
                ("/bytes/300000", ["-o", "/dev/null"], ["100", "292k", "100", "292k", "0", "0"]),
                ("/bytes/5000", [], ["100", "5000", "100", "5000", "0", "0"]),  // the body to a pipe: the meter is drawn
                ("/upload", ["-o", "/dev/null", "-T", small], []),
                ("/echo", ["-o", "/dev/null", "-d", "a=1"], []),
                ("/bytes/300000", ["-o", "/dev/null", "-I"], ["0", "292k", "0", "0", "0", "0"]),
            ]
            for (path, extra, expected) in cases {
                let (status, _, err) = try await trust(good, path, extra)
                #expect(status == 0, "\(path): \(err)")
                let (columns, shape) = meter(err)
                #expect(shape && columns.count == 12, "\(path) \(extra): \(err.debugDescription)")
                let (_, _, curlErr) = try await run(Self.curl, [good.baseURL + path] + lab(good) + extra)
                let curlColumns = meter(curlErr).columns
                #expect(curlColumns.count == 12, "curl \(path): \(curlErr.debugDescription)")
                // A direction's percentage is shown only while its average speed is above 0 B/s (curl's
                // progress_meter): a few bytes over a loaded machine's seconds round to 0 for one tool and not the
                // other, so those columns are compared only where both tools' speeds are.
                let compared =
                    [0, 1, 3, 5] + (columns[safe: 6] != "0" && curlColumns[safe: 6] != "0" ? [2] : [])
                    + (columns[safe: 7] != "0" && curlColumns[safe: 7] != "0" ? [4] : [])
                #expect(
                    compared.map { columns[safe: $0] } == compared.map { curlColumns[safe: $0] },
                    "\(path) \(extra): \(err.debugDescription) vs \(curlErr.debugDescription)")
                if !expected.isEmpty { #expect(Array(columns.prefix(6)) == expected, "\(path) \(extra)") }
                if extra.contains("-T") { #expect(columns[4] == "100" && columns[5] == "5000", "\(columns)") }
                if !extra.contains("-T") && !extra.contains("-d") { #expect(columns[7] == "0" && curlColumns[7] == "0") }
            }
            // A failure: the last line, a line feed, then the error on its own line.
            let (refused, _, refusedErr) = try await run(CLI.binary, ["get", "-o", "/dev/null", "http://127.0.0.1:1/"])
            #expect(refused == 7)
            #expect(meter(refusedErr).shape && refusedErr.contains("\ntrust: "), "\(refusedErr.debugDescription)")
            // --retry after refused connections: each attempt's meter line ends, then its error, then curl's
            // warning (wrapped at 79 columns as curl wraps it), then the next attempt's lines.
            func kinds(_ stderr: String) -> [String] {
                var kinds: [String] = []
                for line in stderr.split(separator: "\n", omittingEmptySubsequences: false) {
                    let kind = line.hasPrefix("\r") ? "meter" : line.hasPrefix("trust: ") || line.hasPrefix("curl: ") ? "error" : String(line)
                    if kind != "error" || kinds.last != "error" { kinds.append(kind) }
                }
                return kinds
            }
            let retryArguments = ["--retry", "2", "--retry-delay", "1", "--retry-connrefused", "-o", "/dev/null", "http://127.0.0.1:1/"]
            let (_, _, retryErr) = try await run(CLI.binary, ["get"] + retryArguments)
            let (_, _, curlRetryErr) = try await run(Self.curl, retryArguments)
            #expect(kinds(retryErr) == kinds(curlRetryErr), "\(retryErr.debugDescription) vs \(curlRetryErr.debugDescription)")
            #expect(kinds(retryErr).contains("Warning: left."), "\(retryErr.debugDescription)")
            // No meter with -s, --no-progress-meter, or -sS (which shows errors only).
            for quiet in [["-s"], ["--no-progress-meter"], ["-sS"]] {
                let (_, _, err) = try await trust(good, "/bytes/300000", ["-o", "/dev/null"] + quiet)
                #expect(err.isEmpty, "\(quiet): \(err.debugDescription)")
            }
        }
    }

    /// `-d @file` drops CR and LF; `--data-binary @file` sends the file as it is (curl's documented difference).
    @Test(.requires(.curl)) func dataFlagsAsCurl() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let file = try temporaryDirectory() + "/data"
            try Data("a=1\r\nb=2\n".utf8).write(to: URL(fileURLWithPath: file))
            for flags in [["-d", "@" + file], ["--data-binary", "@" + file], ["-d", "x=1", "-d", "y=2"], ["--data-raw", "@x"], ["-d", "q", "-X", "PUT"]] {
                let (status, out, err) = try await trust(good, "/echo", flags)
                #expect(status == 0, "\(err)")
                #expect(out == (try await curl(good, "/echo", flags)).1, "\(flags)")
            }
            #expect(try await trust(good, "/echo", ["-d", "@" + file]).1 == "POST\na=1b=2")
            #expect(try await trust(good, "/echo", ["--data-binary", "@" + file]).1 == "POST\na=1\r\nb=2\n")
        }
    }

    /// curl 7.82+'s --json: pieces concatenated (files unchanged), joined to -d with '&', POST, and
    /// Content-Type/Accept application/json unless -H gives them.
    @Test(.requires(.curl)) func jsonBodyAsCurl() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let file = try temporaryDirectory() + "/body.json"
            try Data("{\"f\":\n1}\n".utf8).write(to: URL(fileURLWithPath: file))
            for flags in [
                ["--json", #"{"a":1}"#], ["--json", #"{"a":1}"#, "--json", #"{"b":2}"#], ["--json", "@" + file],
                ["-d", "z", "--json", "@" + file], ["-d", "y", "--data-raw", "z", "--json", "1", "--json", "2"], ["--json", "[]", "-X", "PUT"],
            ] {
                let (status, out, err) = try await trust(good, "/echo", flags)
                #expect(status == 0, "\(err)")
                #expect(out == (try await curl(good, "/echo", flags)).1, "\(flags)")
            }
            func typeAndAccept(_ text: String) -> [String] {
                text.split(separator: "\n").map(String.init).filter { $0.hasPrefix("content-type:") || $0.hasPrefix("accept:") }.sorted()
            }
            for flags in [["--json", "{}"], ["--json", "{}", "-H", "Accept: text/plain"], ["--json", "{}", "-H", "Content-Type: x/y"]] {
                let ours = typeAndAccept(try await trust(good, "/headers", flags).1)
                #expect(ours == typeAndAccept(try await curl(good, "/headers", flags).1), "\(flags)")
                #expect(ours.count == 2, "\(ours)")
            }
            #expect(try await trust(good, "/headers", ["--json", "{}", "-I"]).0 == 2)
        }
    }

    /// --compressed: the same decompressed bytes and exit codes as curl (61 for a corrupt body).
    @Test(.requires(.curl)) func compressedAsCurl() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            for path in ["/gzip/100000", "/deflate/5000", "/gzip/0", "/gzip-corrupt", "/"] {
                for version in ["--http1.1", "--http2"] {
                    let ours = try await trust(good, path, ["--compressed", version])
                    let theirs = try await curl(good, path, ["--compressed", version])
                    #expect(ours.0 == theirs.0, "\(path) \(version): \(ours.2) / \(theirs.2)")
                    // A corrupt stream: what each writes before the check fails depends on how the bytes
                    // arrive (curl writes the decoded block, then finds the bad CRC); the exit code is the contract.
                    if path == "/gzip-corrupt" { continue }
                    #expect(ours.1 == theirs.1, "\(path) \(version): \(ours.1.count) / \(theirs.1.count) bytes")
                }
            }
        }
    }

    @Test func userAgentRefererAndVersions() async throws {
        try await withLabServers(["good"]) { servers in
            let good = servers["good"]!
            let (status, out, _) = try await trust(good, "/headers", ["-A", "agent/1.0", "-e", "https://from.example/"])
            #expect(status == 0)
            #expect(out.contains("user-agent: agent/1.0\n"))
            #expect(out.contains("referer: https://from.example/\n"))
            #expect(try await trust(good, "/", ["--http1.1", "-w", "%{http_version}", "-o", "/dev/null"]).1 == "1.1")
            #expect(try await trust(good, "/", ["--http2", "-w", "%{http_version}", "-o", "/dev/null"]).1 == "2")
            #expect(try await trust(good, "/", ["--http1.1", "--http2"]).0 == 2)
        }
    }

    /// `-k`: the request proceeds and the whole verdict is printed as a warning; pins stay enforced.
    @Test func insecureProceedsWithTheVerdictOnStderr() async throws {
        try await withLabServers(["expired", "self-signed", "mitm"]) { servers in
            let (status, out, err) = try await trust(servers["expired"]!, "/", ["-k", "-w", "%{ssl_verify_result}"])
            #expect(status == 0, "\(err)")
            #expect(out == "hello from expired\n10")
            #expect(err.contains("NOT trusted"))
            #expect(err.contains("[expired]"))
            let (selfSigned, _, selfErr) = try await trust(servers["self-signed"]!, "/", ["--insecure"])
            #expect(selfSigned == 0)
            #expect(selfErr.contains("warning"))
            #expect(try await trust(servers["self-signed"]!, "/", ["-k", "-s"]).2.isEmpty)
            #expect(try await trust(servers["expired"]!, "/", []).0 == 60)
            let pin = Lab.pki.intermediate.certificate.spkiPin.description
            #expect(try await trust(servers["mitm"]!, "/", ["-k", "--pin", pin]).0 == 60)
        }
    }

    /// -s hides error messages, -S brings them back; the meter is drawn when the body goes elsewhere than
    /// a terminal, whether stderr is one or not (as curl), and never with the body on a terminal.
    @Test func silentShowErrorAndMeter() async throws {
        let (silent, _, quiet) = try await run(CLI.binary, ["get", "https://127.0.0.1:1/", "-s"])
        #expect(silent == 7)
        #expect(quiet.isEmpty)
        let (shown, _, loud) = try await run(CLI.binary, ["get", "https://127.0.0.1:1/", "-sS"])
        #expect(shown == 7)
        #expect(!loud.isEmpty)
        let server = try await LabServer.startPlain(name: "plain")
        try await withTeardown({ try? await server.shutdown() }) {
            let args = ["get", server.baseURL + "/bytes/100000", "--resolve", "\(server.host):\(server.port):127.0.0.1", "-o", "/dev/null"]
            #expect(try await run(CLI.binary, args).2.hasPrefix("  % Total    % Received"))
            #expect(try await run(CLI.binary, args + ["--no-progress-meter"]).2.isEmpty)
            // On a terminal (script(1) gives one), with the body going to a file: curl's meter.
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
                print("skipped the progress-meter case: script(1) (bsdutils) is not installed to give trust a terminal")
                return
            }
            let command = args.map { "'\($0)'" }.joined(separator: " ")
            let (_, meter, _) = try await run("/usr/bin/script", ["-qec", "'\(CLI.binary)' " + command, "/dev/null"])
            #expect(meter.contains("% Total    % Received"), "\(meter)")
            let (_, none, _) = try await run("/usr/bin/script", ["-qec", "'\(CLI.binary)' " + command + " --no-progress-meter", "/dev/null"])
            #expect(!none.contains("% Total"))
            // The body to the terminal: no meter to mix with it.
            let toTerminal = ["get", server.baseURL + "/bytes/100", "--resolve", "\(server.host):\(server.port):127.0.0.1"].map { "'\($0)'" }.joined(
                separator: " ")
            let (_, body, _) = try await run("/usr/bin/script", ["-qec", "'\(CLI.binary)' " + toTerminal, "/dev/null"])
            #expect(!body.contains("% Total") && body.count >= 100, "\(body.debugDescription)")
        }
    }

    @Test func versionOnTheRootCommand() async throws {
        let (status, out, _) = try await run(CLI.binary, ["--version"])
        #expect(status == 0)
        #expect(out.hasPrefix("trust "))
    }
}

extension Array {
    /// The element at `index`, or `nil` past the end (a meter line that did not parse has no columns).
    fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}

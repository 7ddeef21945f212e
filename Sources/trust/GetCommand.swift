import ArgumentParser
import Foundation
import NIOHTTP1
import Trust
import TrustHTTP
import TrustNIO
import X509

/// `trust get URL`: an HTTPS request with full trust diagnostics; curl's flags and exit codes.
///
/// The body is written as it arrives (bounded memory whatever its size), to standard output or
/// to `-o FILE` through a temporary file renamed into place when complete.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Send an HTTP(S) request with server trust evaluated in the handshake; curl-compatible exit codes.",
        discussion: """
            Redirects are followed (up to --max-redirs). --cacert adds anchors to the system roots; with --anchors-only
            they replace them. --mode switches to AFNetworking AFSecurityPolicy semantics.
            The body is written as it arrives; -o FILE writes a temporary file beside FILE and renames it into place
            once complete (nothing is left behind on failure or Ctrl-C).
            Exit codes (curl's): 0 done, 1 unsupported protocol, 2 bad usage, 3 malformed URL, 6 could not resolve host,
            7 could not connect, 8 malformed HTTP/1.1 response head (a bare CR or LF, a NUL in a header field),
            16 the server broke an HTTP/2 rule (a frame flood, a flow-control violation, GOAWAY abuse), 18 the server closed
            the connection before the end of the body (partial file), 22 HTTP status >= 400 with --fail, 23 failure writing the output (a closed pipe, a
            full disk), 28 timeout (-m, --connect-timeout, --speed-time), 35 TLS handshake failure other than trust
            (including a server refusing or requiring a client certificate), 47 too many redirects, 56 connection lost or a response head over the limits,
            58 local client-certificate problem, 60 server trust failure (reasons on stderr), 61 --compressed body undecodable
            or inflating more than 100 times, 63 --max-filesize exceeded,
            67 authentication failed (--user given and the final response is still 401, or --proxy-user and 407),
            130 interrupted (Ctrl-C).
            Proxies: -x/--proxy URL (http proxy; https through CONNECT, TLS and trust end to end), -U/--proxy-user,
            --noproxy; without -x the environment's http_proxy/https_proxy/no_proxy apply, as in curl.
            HTTP authentication: --user answers Basic and Digest challenges, the strongest offered first (--any-auth,
            the default); --digest answers Digest only; --basic answers Basic only and sends it before any challenge,
            as curl does. Basic is never sent over plain http unless --allow-cleartext-auth.
            Secrets (passwords, passphrases, Authorization and Proxy-Authorization values, URL user-info) are never
            printed: -v shows them as ***.
            """)

    @Argument(help: "The URL (http or https).")
    var url: String

    @Option(name: .shortAndLong, help: "Write the body to FILE instead of standard output ('-': standard output).")
    var output: String?

    @Flag(name: [.customShort("O"), .customLong("remote-name")], help: "Write the body to a file in the current folder named as the URL's last path segment (curl's -O).")
    var remoteName = false

    @Option(name: [.customShort("H"), .customLong("header")], help: "A request header, 'Name: value'; repeatable.")
    var header: [String] = []

    @Option(name: [.customShort("X"), .customLong("request")], help: "The request method.")
    var method: String?

    @Option(name: [.customShort("d"), .customLong("data")], help: "Request body (sends POST unless -X says otherwise); @FILE reads a file without its CR and LF (@-: standard input); repeated: joined with '&'.")
    var data: [String] = []

    @Option(name: .customLong("data-binary"), help: "Request body as is; @FILE reads a file unchanged; repeatable (joined with '&').")
    var dataBinary: [String] = []

    @Option(name: .customLong("data-raw"), help: "Request body as is, '@' not special; repeatable (joined with '&').")
    var dataRaw: [String] = []

    @Option(name: .customLong("json"), help: "A JSON request body, as curl's --json: POST, with Content-Type and Accept application/json unless -H sets them; @FILE reads a file unchanged (@-: standard input); repeated: concatenated.")
    var json: [String] = []

    @Option(name: [.customShort("A"), .customLong("user-agent")], help: "The User-Agent header.")
    var userAgent: String?

    @Option(name: [.customShort("e"), .customLong("referer")], help: "The Referer header.")
    var referer: String?

    @Option(name: .long, help: "Anchor certificates (PEM/DER file or folder) added to the system roots; repeatable.")
    var cacert: [String] = []

    @OptionGroup var trustOptions: TrustOptions

    @Flag(name: [.customShort("k"), .customLong("insecure")], help: "Proceed even when the server is not trusted; the full trust verdict is printed as a warning (--pin is still enforced, as curl's --pinnedpubkey).")
    var insecure = false

    @Option(name: [.customShort("E"), .customLong("cert")], help: "Client certificate: a PKCS#12 file (.p12/.pfx), or a PEM chain (with --key, or the key in the same file); curl's FILE:PASSWORD form is accepted.")
    var cert: String?

    @Option(name: [.customLong("cert-password"), .customLong("pass")], help: "The passphrase of the --cert PKCS#12 file or of an encrypted PEM key (--pass as in curl).")
    var certPassword: String?

    @Option(name: .long, help: "The --cert file's type: P12 or PEM (default: from the name and content, as curl).")
    var certType: String?

    @Option(name: .long, help: "The private key (PEM: PKCS#8, SEC1 or PKCS#1) for a PEM --cert.")
    var key: String?

    @Option(name: .long, help: "A trust configuration file (per-host pins, anchors, report-only…); replaces --cacert/--pin/--mode.")
    var config: String?

    @Option(name: [.customShort("u"), .customLong("user")], help: "USER:PASSWORD for HTTP authentication (Basic or Digest).")
    var user: String?

    @Flag(name: .long, help: "Basic only, sent before any challenge (curl's --basic).")
    var basic = false

    @Flag(name: .long, help: "Digest only.")
    var digest = false

    @Flag(name: .long, help: "The strongest scheme the server offers (the default).")
    var anyAuth = false

    @Flag(name: .long, help: "Allow Basic credentials over plain http (clear text).")
    var allowCleartextAuth = false

    @Option(name: [.customShort("x"), .customLong("proxy")], help: "An HTTP proxy, http://[USER:PASSWORD@]HOST[:PORT] (https goes through CONNECT). Without it, http_proxy / https_proxy / no_proxy from the environment apply, as in curl.")
    var proxy: String?

    @Option(name: [.customShort("U"), .customLong("proxy-user")], help: "USER:PASSWORD for the proxy (Basic or Digest, when it asks).")
    var proxyUser: String?

    @Option(name: .long, help: "Hosts reached without the proxy, comma-separated ('*': all), as curl's --noproxy.")
    var noproxy: String?

    @Option(name: .long, help: "The most redirects to follow (0: none).")
    var maxRedirs: Int = 10

    @Flag(name: [.customShort("L"), .customLong("location")], help: "Accepted for curl compatibility; redirects are followed by default.")
    var location = false

    @Flag(name: [.customShort("f"), .customLong("fail")], help: "Exit 22 without printing the body when the HTTP status is 400 or more.")
    var fail = false

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Write the response head (status line and header fields) before the body.")
    var include = false

    @Flag(name: [.customShort("I"), .customLong("head")], help: "Send HEAD and write the response head.")
    var headOnly = false

    @Option(name: [.customShort("w"), .customLong("write-out")], help: "After the transfer, write FORMAT: %{http_code}, %{url_effective}, %{num_redirects}, %{remote_ip}, %{time_total}, %{size_download}, %{ssl_verify_result}, %{stderr}, \\n… (curl's; @FILE reads it).")
    var writeOut: String?

    @Option(name: .long, help: "Connect HOST:PORT to ADDRESS instead (curl syntax HOST:PORT:ADDRESS); repeatable.")
    var resolve: [String] = []

    @Flag(name: .customLong("http1.1"), help: "HTTP/1.1 only.")
    var http11 = false

    @Flag(name: .customLong("http2"), help: "HTTP/2 when the server offers it, else HTTP/1.1 (the default).")
    var http2 = false

    @Flag(name: .long, help: "Ask for a compressed response (Accept-Encoding: deflate, gzip) and write it decompressed; a body inflating more than 100 times its compressed size (a zip bomb) or invalid gzip/deflate data ends with exit 61.")
    var compressed = false

    @Option(name: .long, help: "Seconds allowed to connect (TCP + TLS).")
    var connectTimeout: Double = 10

    @Option(name: [.customShort("m"), .customLong("max-time")], help: "Seconds allowed for the whole transfer, body included (default: no limit, as curl).")
    var maxTime: Double?

    @Option(name: [.customShort("y"), .customLong("speed-time")], help: "Abort (exit 28) when slower than --speed-limit for this many seconds (curl's; 30 when only --speed-limit is given).")
    var speedTime: Int?

    @Option(name: [.customShort("Y"), .customLong("speed-limit")], help: "Bytes per second below which --speed-time aborts (1 when only --speed-time is given).")
    var speedLimit: Int?

    @Option(name: .customLong("retry"), help: "Retry a transient failure this many times (curl's: a timeout, an unresolvable host, HTTP 408/429/500/502/503/504).")
    var retryCount = 0

    @Option(name: .long, help: "Seconds between retries (default: 1, doubling up to 600).")
    var retryDelay: Int?

    @Option(name: .long, help: "No retry after this many seconds since the first attempt.")
    var retryMaxTime: Int?

    @Flag(name: .customLong("retry-connrefused"), help: "With --retry, also retry a refused connection.")
    var retryConnrefused = false

    @Flag(name: .long, help: "With --retry, retry every failure.")
    var retryAllErrors = false

    @Option(name: .long, help: "The largest body accepted, in bytes: exit 63 when it is larger (announced or received).")
    var maxFilesize: Int64?

    @Flag(name: [.customShort("s"), .customLong("silent")], help: "No progress meter, no error messages.")
    var silent = false

    @Flag(name: [.customShort("S"), .customLong("show-error")], help: "With -s, still show error messages.")
    var showError = false

    @Flag(name: .long, help: "No progress meter (error messages still shown).")
    var noProgressMeter = false

    @Flag(name: [.customShort("v"), .customLong("verbose")], help: "Show the request and response headers (secrets as ***), TLS version, ALPN, the presented chain with pins, every challenge and its disposition (on stderr).")
    var verbose = false

    func validate() throws {
        if maxRedirs < 0 { throw ValidationError("--max-redirs must be 0 or more") }
        if config != nil && (!cacert.isEmpty || !trustOptions.pin.isEmpty || trustOptions.mode != nil || trustOptions.anchorsOnly) {
            throw ValidationError("--config replaces --cacert, --anchors-only, --pin and --mode; use one or the other")
        }
        if [basic, digest, anyAuth].filter({ $0 }).count > 1 { throw ValidationError("use one of --basic, --digest, --any-auth") }
        if let user, !user.contains(":") { throw ValidationError("--user takes USER:PASSWORD") }
        if let proxyUser, !proxyUser.contains(":") { throw ValidationError("--proxy-user takes USER:PASSWORD") }
        if connectTimeout <= 0 || (maxTime ?? 1) <= 0 { throw ValidationError("timeouts must be positive") }
        if (speedTime ?? 1) <= 0 || (speedLimit ?? 1) <= 0 { throw ValidationError("--speed-time and --speed-limit must be positive") }
        if (maxFilesize ?? 0) < 0 { throw ValidationError("--max-filesize must be 0 or more") }
        if output != nil && remoteName { throw ValidationError("use one of -o and -O") }
        if http11 && http2 { throw ValidationError("use one of --http1.1 and --http2") }
        // curl: "You can only select one HTTP request method!"
        if headOnly && hasBody {
            throw ValidationError("you can only select one HTTP request method: -I sends HEAD, -d sends a body")
        }
    }

    func run() async throws {
        let diagnostics = Diagnostics(showsErrors: !silent || showError, secrets: collectSecrets())
        let writeOutFormat = try writeOut.map(WriteOut.load)
        let shownURL = Secrets.redactedURL(url)
        // curl shows the meter only when it does not mix with a body on the terminal, and only on a terminal.
        let bodyToTerminal = (output == nil || output == "-") && !remoteName && isatty(STDOUT_FILENO) == 1
        let meter: ProgressMeter? = !silent && !noProgressMeter && isatty(STDERR_FILENO) == 1 && !bodyToTerminal ? ProgressMeter() : nil
        // curl: speed-limit defaults to 1 byte/s with only --speed-time, speed-time to 30 s with only --speed-limit.
        let speed = speedTime != nil || speedLimit != nil ? (bytes: speedLimit ?? 1, seconds: speedTime ?? 30) : nil
        let maximumTime = maxTime.map { Duration.milliseconds(Int64($0 * 1000)) }
        let parsedURL = URL(string: url)
        let resolveMap = try TrustOptions.resolveMap(resolve)
        let endpoint = Self.remoteEndpoint(url: parsedURL, resolve: resolveMap, proxy: proxy)
        let monitor = TransferMonitor(
            facts: TransferFacts(effectiveURL: shownURL, method: requestMethod), diagnostics: diagnostics, writeOut: writeOutFormat,
            meter: meter, speedLimit: speed, maximumTime: maximumTime, remote: endpoint)

        guard let requestURL = parsedURL, let scheme = requestURL.scheme?.lowercased() else {
            monitor.end(3, message: "malformed URL \(shownURL)")
        }
        guard scheme == "https" || scheme == "http" else {
            monitor.end(1, message: "unsupported protocol \(scheme)")
        }
        var destination = BodyWriter.Destination.standardOutput
        if let output, output != "-" { destination = .file(output) }
        if remoteName {
            guard let name = BodyWriter.remoteName(of: requestURL) else {
                monitor.end(23, message: "(23) Remote file name has no length")
            }
            destination = .file(name)
        }
        let configuration = try makeConfiguration(scheme: scheme, monitor: monitor, diagnostics: diagnostics)
        let request = try makeRequest(requestURL)
        if verbose { showRequest(request, userAgent: configuration.userAgent, diagnostics: diagnostics) }

        monitor.start()
        let session = try Session(configuration: configuration)
        // Pin-failure reports (with --config) go out before the command ends.
        let reporter: PinFailureReporter? = {
            if case .configuration(_, let reporter) = configuration.serverTrust { return reporter }
            return nil
        }()
        func finish(_ code: Int32, _ lines: [String]) async -> Never {
            // A deadline ends at once (curl's -m): the session is not waited for.
            if code != 28 {
                await session.shutdown()
                await reporter?.flush()
            }
            for line in lines.dropLast() { diagnostics.error(line) }
            monitor.end(code, message: lines.last)
        }

        var retry = RetryPolicy(count: retryCount, delay: retryDelay, maximumTime: retryMaxTime, connectionRefused: retryConnrefused,
                                allErrors: retryAllErrors, failOnError: fail)
        /// Ends the command with `code` — or, when --retry allows it for this failure, unwinds to try again.
        func giveUp(_ code: Int32, _ lines: [String], error: SessionError? = nil) async throws -> Never {
            if let reason = retry.transientFailure(code: code, error: error, status: monitor.facts.statusCode), retry.allows(reason) {
                throw RetryAttempt(reason: reason, retryAfter: nil)
            }
            await finish(code, lines)
        }
        while true {
            do {
                monitor.update { facts in
                    facts.bytes = 0
                    facts.statusCode = nil
                }
                let response: StreamingResponse
                do {
                    response = try await session.bytes(for: request)
                } catch let error as SessionError {
                    monitor.update { $0.verifyResult = TrustVerdictCode.code(for: error.trustDecision) }
                    let (code, lines) = report(error)
                    try await giveUp(code, (error.code == .timedOut ? [monitor.timeoutLine()] : []) + lines, error: error)
                } catch {
                    try await giveUp(1, ["\(error)"])
                }
                let headText = Self.headText(response)
                monitor.update { facts in
                    facts.statusCode = response.statusCode
                    facts.effectiveURL = Secrets.redactedURL(response.url)
                    facts.redirects = response.redirects.count
                    facts.httpVersion = response.httpVersion
                    facts.headers = response.headers
                    facts.headerSize = headText.utf8.count
                    facts.expectedBytes = response.value(forHeader: "content-length").flatMap { Int64($0) }
                    facts.headAt = monitor.elapsed
                    if !insecure { facts.verifyResult = TrustVerdictCode.code(for: response.serverTrust) }
                }
                if verbose {
                    diagnostics.verbose("* \(response.httpVersion)\(response.tlsVersion.map { " over \($0)" } ?? "")")
                    for redirect in response.redirects { diagnostics.verbose("* redirected from \(Secrets.redactedURL(redirect))") }
                    diagnostics.verbose("< \(response.httpVersion) \(response.statusCode)")
                    for (name, value) in response.headers { diagnostics.verbose("< \(name): \(value)") }
                }
                if (user != nil && response.statusCode == 401) || (configuration.proxy?.credential != nil && response.statusCode == 407) {
                    try await giveUp(67, ["authentication failed: \(response.statusCode) from \(response.statusCode == 407 ? "the proxy" : Secrets.redactedURL(response.url))"])
                }
                if response.statusCode == 407 && response.url.scheme?.lowercased() == "https" {
                    try await giveUp(56, ["CONNECT tunnel failed: the proxy requires authentication (407); give --proxy-user"])
                }
                if fail && response.statusCode >= 400 {
                    try await giveUp(22, ["the requested URL returned error: \(response.statusCode)"])
                }
                // curl: a body announced larger than --max-filesize is refused before it is read.
                if let maxFilesize, let announced = monitor.facts.expectedBytes, announced > maxFilesize, !headOnly {
                    try await giveUp(63, ["(63) Maximum file size exceeded: \(announced) > \(maxFilesize) bytes"])
                }

                let writer: BodyWriter
                do {
                    writer = try BodyWriter(destination)
                } catch {
                    try await giveUp(23, ["(23) Failure writing output to destination: \(error)"])
                }
                monitor.setTemporaryPath(writer.temporaryPath)
                do {
                    if include || headOnly { try writer.write(headText) }
                    var received: Int64 = 0
                    for try await chunk in response.body {
                        received += Int64(chunk.count)
                        if let maxFilesize, received > maxFilesize {
                            writer.discard()
                            try await giveUp(63, ["(63) Maximum file size exceeded: more than \(maxFilesize) bytes"])
                        }
                        if !headOnly { try writer.write(chunk) }
                        monitor.received(chunk.count)
                    }
                    try writer.close()
                    // curl's transient HTTP answers (408, 429, 500, 502, 503, 504) are retried with --retry; a
                    // file then holds only the last answer (curl truncates it), stdout keeps every body.
                    if let reason = retry.transientStatus(response.statusCode), retry.allows(reason) {
                        writer.discard()
                        throw RetryAttempt(reason: reason, retryAfter: response.value(forHeader: "retry-after"))
                    }
                    try monitor.commit { () throws(OutputWriteError) in try writer.commit() }
                } catch let retrying as RetryAttempt {
                    throw retrying
                } catch let error as OutputWriteError {
                    writer.discard()
                    // curl: "Failure writing output to destination" — one line, whatever the destination.
                    try await giveUp(23, ["(23) Failure writing output to destination" + (error.errorNumber == EPIPE ? "" : ": \(error)")])
                } catch let error as SessionError {
                    writer.discard()
                    let (code, lines) = report(error)
                    try await giveUp(code, (error.code == .timedOut ? [monitor.timeoutLine()] : []) + lines, error: error)
                } catch {
                    writer.discard()
                    try await giveUp(56, ["(56) Failure when receiving data from the peer: \(error)"])
                }
                break
            } catch let attempt as RetryAttempt {
                let wait = retry.next(retryAfter: attempt.retryAfter)
                // curl's warning, word for word.
                if !silent { diagnostics.curlWarning("Problem \(attempt.reason.rawValue). Will retry in \(wait) seconds. \(retry.remaining + 1) retries left.") }
                try? await Task.sleep(for: .seconds(wait))
            }
        }
        monitor.finishMeter()
        await session.shutdown()
        await reporter?.flush()
        monitor.completed(0)
    }

    /// The method sent: -X, else HEAD for -I, POST with data, GET.
    var requestMethod: String {
        if let method { return method.uppercased() }
        if headOnly { return "HEAD" }
        return hasBody ? "POST" : "GET"
    }

    /// Whether any data flag gives a body.
    var hasBody: Bool { !(data.isEmpty && dataBinary.isEmpty && dataRaw.isEmpty && json.isEmpty) }
}

import ArgumentParser
import HTTPTypes
import NIOHTTP1
import Trust
import TrustHTTP
import TrustNIO
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `trust get URL`: an HTTPS request with full trust diagnostics; curl's flags and exit codes.
///
/// The body is written as it arrives (bounded memory whatever its size), to standard output or
/// to `-o FILE` through a temporary file renamed into place when complete.
struct GetCommand: AsyncParsableCommand {
    /// `_superCommandName` says what `get` is when ``TrustMain`` parses it as a root of its own (its fast
    /// path): a part of `trust`, so ArgumentParser does not look for `--generate-completion-script` in its
    /// arguments — which parses them twice more, about 1.5 ms of every run — (completion scripts are
    /// `trust`'s). It is read only from a root's configuration: as `trust`'s subcommand nothing changes.
    static let configuration = CommandConfiguration(
        commandName: "get",
        _superCommandName: "trust",
        abstract: "Send an HTTP(S) request with server trust evaluated in the handshake; curl-compatible exit codes.",
        discussion: """
            Redirects are followed (up to --max-redirs). --cacert adds anchors to the system roots; with \
            --anchors-only they replace them. --mode switches to AFNetworking AFSecurityPolicy semantics. \
            The body is written as it arrives; -o FILE writes a new file as a temporary file beside it, renamed into \
            place once complete (nothing is left behind on failure or Ctrl-C), and a file that exists in place, as \
            curl does (its mode kept, a symbolic link written through).

            Secrets (passwords, passphrases, Authorization and Proxy-Authorization values, URL user-info) are \
            never printed: -v shows them as ***. Basic credentials are never sent over plain http unless \
            --allow-cleartext-auth. Passwords, passphrases, credential headers and user-info are blanked from the \
            process's argument list (ps, /proc/PID/cmdline) once parsed; -u USER (prompt), --netrc and \
            --pass env:NAME|file:PATH keep them out of it altogether. Without -x, the environment's http_proxy \
            (never HTTP_PROXY), https_proxy, all_proxy and no_proxy apply, as in curl; a proxy trust cannot use \
            (socks, https, a malformed URL) is an error, never a direct connection.

            The progress meter (curl's, download and upload columns) goes to stderr unless -s, --no-progress-meter \
            or the body goes to a terminal, so -o FILE 2>log writes it into the log, as curl does. --retry waits as \
            curl does (doubling, Retry-After honoured, a warning line per retry); -o then holds the last answer, \
            stdout every one. No time limit unless -m, which covers the body too. -w takes curl's variables: \
            %{http_code}, %{url_effective}, %{num_redirects}, %{remote_ip}, %{time_connect}, %{time_appconnect}, \
            %{time_total}, %{size_download}, %{size_upload}, %{speed_upload}, %{ssl_verify_result}, %{stderr}…

            Exit codes (curl's): 0 done, 1 unsupported protocol (a redirect to file:, ftp: or data: too), 2 bad usage, 3 malformed URL (an invalid \
            internationalised host or a port outside 1-65535 too), 5 a malformed proxy URL or port, 6 could not \
            resolve host, 7 could not connect (or an unknown proxy scheme), 8 malformed HTTP/1.1 \
            response head, 16 the server broke an HTTP/2 rule (floods, flow control, GOAWAY abuse), 18 the \
            body ended early (partial file), 22 HTTP status >= 400 with --fail, 23 failure writing the output \
            (a closed pipe, a full disk), 26 an upload file (-T) that cannot be read (or a netrc file that cannot be parsed), 28 timeout (-m, --connect-timeout, --speed-time), 35 TLS handshake \
            failure other than trust (a client certificate required or refused included), 47 too many \
            redirects, 56 connection lost or a response head over the limits, 58 local client-certificate \
            problem, 60 server trust failure (reasons on stderr; a revoked certificate too), 61 --compressed body undecodable or \
            inflating more than 100 times, 63 --max-filesize exceeded, 67 authentication failed (a final 401 \
            with --user, 407 with --proxy-user), 65 a body read from standard input that had to be sent again \
            (after a challenge or a redirect), 49 a --resolve entry that does not parse, 82 a --crlfile that cannot be read or parsed, 97 a SOCKS or https proxy (not spoken by trust), 130 interrupted \
            (Ctrl-C).
            """)

    @Argument(help: "The URL (http or https).")
    var url: String

    @OptionGroup(title: "Request") var requestOptions: GetRequestOptions
    @OptionGroup(title: "Output") var outputOptions: GetOutputOptions
    @OptionGroup(title: "Server trust") var serverTrustOptions: GetTrustOptions
    @OptionGroup(title: "Client certificate") var clientCertificateOptions: GetClientCertificateOptions
    @OptionGroup(title: "HTTP authentication and proxies") var authenticationOptions: GetAuthenticationOptions
    @OptionGroup(title: "Connection and time limits") var connectionOptions: GetConnectionOptions
    @OptionGroup(title: "Retries") var retryOptions: GetRetryOptions

    /// The netrc entry for the URL's host (`--netrc`, `--netrc-optional`, `--netrc-file`), once read by
    /// `prepareCredentials()`; not an argument.
    var netrcEntry: Credential?

    /// The arguments ArgumentParser decodes: every property but ``netrcEntry``.
    enum CodingKeys: String, CodingKey {
        case url, requestOptions, outputOptions, serverTrustOptions, clientCertificateOptions, authenticationOptions, connectionOptions, retryOptions
    }

    // The options by name, as the rest of the command reads them.
    var method: String? { requestOptions.method }
    var header: [String] { requestOptions.header }
    var data: [String] { requestOptions.data }
    var dataBinary: [String] { requestOptions.dataBinary }
    var dataRaw: [String] { requestOptions.dataRaw }
    var json: [String] { requestOptions.json }
    var uploadFile: String? { requestOptions.uploadFile }
    var userAgent: String? { requestOptions.userAgent }
    var referer: String? { requestOptions.referer }
    var compressed: Bool { requestOptions.compressed }
    var http11: Bool { requestOptions.http11 }
    var http2: Bool { requestOptions.http2 }
    var maxRedirs: Int { requestOptions.maxRedirs }
    var location: Bool { requestOptions.location }
    var output: String? { outputOptions.output }
    var remoteName: Bool { outputOptions.remoteName }
    var include: Bool { outputOptions.include }
    var headOnly: Bool { outputOptions.headOnly }
    var writeOut: String? { outputOptions.writeOut }
    var fail: Bool { outputOptions.fail }
    var maxFilesize: Int64? { outputOptions.maxFilesize }
    var silent: Bool { outputOptions.silent }
    var showError: Bool { outputOptions.showError }
    var noProgressMeter: Bool { outputOptions.noProgressMeter }
    var verbose: Bool { outputOptions.verbose }
    var cacert: [String] { serverTrustOptions.cacert }
    var trustOptions: TrustOptions { serverTrustOptions.trustOptions }
    var insecure: Bool { serverTrustOptions.insecure }
    var noAIA: Bool { serverTrustOptions.noAIA }
    var config: String? { serverTrustOptions.config }
    var cert: String? { clientCertificateOptions.cert }
    var certPassword: String? { clientCertificateOptions.certPassword }
    var certType: String? { clientCertificateOptions.certType }
    var key: String? { clientCertificateOptions.key }
    var user: String? { authenticationOptions.user }
    var basic: Bool { authenticationOptions.basic }
    var digest: Bool { authenticationOptions.digest }
    var anyAuth: Bool { authenticationOptions.anyAuth }
    var allowCleartextAuth: Bool { authenticationOptions.allowCleartextAuth }
    var proxy: String? { authenticationOptions.proxy }
    var proxyUser: String? { authenticationOptions.proxyUser }
    var noproxy: String? { authenticationOptions.noproxy }
    var resolve: [String] { connectionOptions.resolve }
    // At most GetConnectionOptions.longestSeconds (31 years): longer is no limit in practice, and no conversion traps.
    var connectTimeout: Double { min(connectionOptions.connectTimeout, GetConnectionOptions.longestSeconds) }
    var maxTime: Double? { connectionOptions.maxTime.map { min($0, GetConnectionOptions.longestSeconds) } }
    var expect100Timeout: Double { connectionOptions.expect100Timeout }
    var speedTime: Int? { connectionOptions.speedTime }
    var speedLimit: Int? { connectionOptions.speedLimit }
    var retryCount: Int { retryOptions.retryCount }
    var retryDelay: Int? { retryOptions.retryDelay }
    var retryMaxTime: Int? { retryOptions.retryMaxTime }
    var retryConnrefused: Bool { retryOptions.retryConnrefused }
    var retryAllErrors: Bool { retryOptions.retryAllErrors }

    func validate() throws {
        if maxRedirs < 0 { throw ValidationError("--max-redirs must be 0 or more") }
        if config != nil && (!cacert.isEmpty || !trustOptions.pin.isEmpty || trustOptions.mode != nil || trustOptions.anchorsOnly) {
            throw ValidationError("--config replaces --cacert, --anchors-only, --pin and --mode; use one or the other")
        }
        if [basic, digest, anyAuth].filter({ $0 }).count > 1 { throw ValidationError("use one of --basic, --digest, --any-auth") }
        if connectTimeout <= 0 || (maxTime ?? 1) <= 0 { throw ValidationError("timeouts must be positive") }
        if !(expect100Timeout >= 0) || expect100Timeout > 86_400 { throw ValidationError("--expect100-timeout takes 0 to 86400 seconds") }
        if (speedTime ?? 1) <= 0 || (speedLimit ?? 1) <= 0 { throw ValidationError("--speed-time and --speed-limit must be positive") }
        if (maxFilesize ?? 0) < 0 { throw ValidationError("--max-filesize must be 0 or more") }
        if output != nil && remoteName { throw ValidationError("use one of -o and -O") }
        if http11 && http2 { throw ValidationError("use one of --http1.1 and --http2") }
        // curl: "You can only select one HTTP request method!"
        if headOnly && (hasBody || uploadFile != nil) {
            throw ValidationError("you can only select one HTTP request method: -I sends HEAD, \(hasBody ? "-d" : "-T") sends a body")
        }
        if uploadFile != nil && hasBody {
            throw ValidationError("you can only select one HTTP request method: -T sends PUT, -d sends POST")
        }
    }

    func run() async throws {
        let diagnostics = Diagnostics(showsErrors: !silent || showError, secrets: collectSecrets())
        let writeOutFormat = try writeOut.map(WriteOut.load)
        // -T FILE names the target when the URL has no file part (curl's rule).
        let upload = uploadFile.map(UploadFile.init(path:))
        let givenURL = URL(string: url)
        let parsedURL = givenURL.map { upload?.target(for: $0) ?? $0 }
        let shownURL = Secrets.redactedURL(parsedURL == givenURL ? url : parsedURL?.absoluteString ?? url)
        // curl shows the meter on stderr unless the body goes to a terminal, where the two would mix: stderr
        // itself need not be a terminal (`-o file 2>log` writes the meter into the log, as curl does).
        let bodyToTerminal = (output == nil || output == "-") && !remoteName && isatty(STDOUT_FILENO) == 1
        let meter: ProgressMeter? = !silent && !noProgressMeter && !bodyToTerminal ? ProgressMeter() : nil
        // curl: speed-limit defaults to 1 byte/s with only --speed-time, speed-time to 30 s with only --speed-limit.
        let speed = speedTime != nil || speedLimit != nil ? (bytes: speedLimit ?? 1, seconds: speedTime ?? 30) : nil
        let maximumTime = maxTime.map { Duration.milliseconds(Int64($0 * 1000)) }
        let resolveMap = try resolveEntries(diagnostics: diagnostics)
        let endpoint = Self.remoteEndpoint(url: parsedURL, resolve: resolveMap, proxies: proxyEnvironment())
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
        var request: TrustHTTPClientRequest
        do {
            request = try makeRequest(requestURL, upload: upload)
        } catch let error as UploadFile.Unreadable {
            monitor.end(26, message: "(26) Failed to open/read local data from file/application: \(error)")
        }
        // %{size_upload}: the body bytes the connection took for the last send of the request.
        // The meter's Xferd column too (with the body's length, when known, for its percentage).
        request.uploadProgress = { sent, expected in
            monitor.update { facts in
                facts.uploaded = Int64(sent)
                facts.expectedUpload = expected.map(Int64.init)
            }
        }
        if verbose { showRequest(request, userAgent: configuration.userAgent, diagnostics: diagnostics) }

        monitor.start()
        let session = try TrustHTTPClient(configuration: configuration)
        // Pin-failure reports (with --config) go out before the command ends.
        let reporter = configuration.pinFailureReporter
        func finish(_ code: Int32, _ lines: [String]) async -> Never {
            // A deadline ends at once (curl's -m): the session is not waited for.
            if code != 28 {
                await session.shutdown()
                // The error is told first; pin-failure reports (each bounded by PinFailureReporter.Limits) go out after.
                if let reporter { await monitor.end(code, messages: lines) { await reporter.flush() } }
            }
            monitor.end(code, messages: lines)
        }

        var retry = RetryPolicy(
            count: retryCount, delay: retryDelay, maximumTime: retryMaxTime, connectionRefused: retryConnrefused,
            allErrors: retryAllErrors, failOnError: fail)
        /// Ends the command with `code` — or, when --retry allows it for this failure, unwinds to try again.
        func giveUp(_ code: Int32, _ lines: [String], error: TrustHTTPClientError? = nil) async throws -> Never {
            if let reason = retry.transientFailure(code: code, error: error, status: monitor.facts.statusCode), retry.allows(reason) {
                throw RetryAttempt(reason: reason, retryAfter: nil, lines: lines)
            }
            await finish(code, lines)
        }
        while true {
            do {
                monitor.update { facts in
                    facts.bytes = 0
                    facts.statusCode = nil
                }
                let response: TrustHTTPClientStreamingResponse
                do {
                    response = try await session.bytes(for: request)
                } catch let error as TrustHTTPClientError {
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
                    facts.httpVersion = response.httpVersion.text
                    facts.headers = response.headers
                    facts.headerSize = headText.utf8.count
                    facts.expectedBytes = response.headers[.contentLength].flatMap { Int64($0) }
                    facts.headAt = monitor.elapsed
                    if !insecure { facts.verifyResult = TrustVerdictCode.code(for: response.serverTrust) }
                }
                if verbose {
                    diagnostics.verbose("* \(response.httpVersion.text)\(response.tlsVersion.map { " over \($0.displayName)" } ?? "")")
                    for redirect in response.redirects { diagnostics.verbose(DisplayText("* redirected from \(Secrets.redactedURL(redirect))").description) }
                    diagnostics.verbose("< \(response.httpVersion.text) \(response.statusCode)")
                    // Names and values as the server sent them, escaped (DisplayText): never a raw control character.
                    for field in response.headers { diagnostics.verbose(DisplayText("< \(field.name.rawName): \(field.value)").description) }
                }
                if (credential != nil && response.statusCode == 401) || (Self.proxyCredentialGiven(configuration) && response.statusCode == 407) {
                    try await giveUp(
                        67,
                        [
                            DisplayText(
                                "authentication failed: \(response.statusCode) from \(response.statusCode == 407 ? "the proxy" : Secrets.redactedURL(response.url))"
                            ).description
                        ])
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
                        received += Int64(chunk.readableBytes)
                        if let maxFilesize, received > maxFilesize {
                            writer.discard()
                            try await giveUp(63, ["(63) Maximum file size exceeded: more than \(maxFilesize) bytes"])
                        }
                        if !headOnly { try writer.write(chunk) }
                        monitor.received(chunk.readableBytes)
                    }
                    try writer.close()
                    // curl's transient HTTP answers (408, 429, 500, 502, 503, 504) are retried with --retry; a
                    // file then holds only the last answer (curl truncates it), stdout keeps every body.
                    if let reason = retry.transientStatus(response.statusCode), retry.allows(reason) {
                        writer.discard()
                        throw RetryAttempt(reason: reason, retryAfter: response.headers[.retryAfter])
                    }
                    try monitor.commit { () throws(OutputWriteError) in try writer.commit() }
                } catch let retrying as RetryAttempt {
                    throw retrying
                } catch let error as OutputWriteError {
                    writer.discard()
                    // curl: "Failure writing output to destination" — one line, whatever the destination.
                    try await giveUp(23, ["(23) Failure writing output to destination" + (error.errorNumber == EPIPE ? "" : ": \(error)")])
                } catch let error as TrustHTTPClientError {
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
                // As curl: the attempt's meter line ends, its error (if any), then the warning, word for word;
                // the next attempt's meter lines follow (without the header again).
                monitor.endAttempt()
                for line in attempt.lines { diagnostics.error(line) }
                if !silent {
                    diagnostics.curlWarning("Problem \(attempt.reason.rawValue). Will retry in \(wait) seconds. \(retry.remaining + 1) retries left.")
                }
                try? await Task.sleep(for: .seconds(wait))
                monitor.beginAttempt()
            }
        }
        monitor.finishMeter()
        await session.shutdown()
        await reporter?.flush()
        monitor.completed(0)
    }

    /// The method sent: -X, else HEAD for -I, PUT with -T, POST with data, GET.
    var requestMethod: String {
        if let method { return method.uppercased() }
        if headOnly { return "HEAD" }
        if uploadFile != nil { return "PUT" }
        return hasBody ? "POST" : "GET"
    }

    /// Whether any data flag gives a body.
    var hasBody: Bool { !(data.isEmpty && dataBinary.isEmpty && dataRaw.isEmpty && json.isEmpty) }
}

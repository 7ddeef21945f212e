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

/// How `trust get` turns its flags into a session configuration and a request, and a
/// `TrustHTTPClientError` into curl's exit code.
extension GetCommand {
    /// curl's `-u`/`-U` `USER:PASSWORD`, split at the first colon (by byte); nil without one.
    static func credential(fromUserArgument argument: String) -> Credential? {
        guard let (user, password) = argument.splitOnce(atASCII: UInt8(ascii: ":")) else { return nil }
        return Credential(user: String(user), password: String(password), persistence: .none)
    }

    /// A `-H` line's name and value (split at the first colon, by byte; whitespace trimmed); nil without a colon.
    /// `name` as a field name; one that is not an HTTP token (RFC 9110 §5.1) cannot be sent.
    static func fieldName(_ name: String, url: URL) throws -> HTTPField.Name {
        guard let fieldName = HTTPField.Name(name) else {
            throw TrustHTTPClientError(.badURL, "a header field name is not an HTTP token", url: url)
        }
        return fieldName
    }

    static func headerParts(_ line: String) -> (name: String, value: String)? {
        guard let (name, value) = line.splitOnce(atASCII: UInt8(ascii: ":")) else { return nil }
        return (name.trimmingASCIIBlanks(), value.trimmingASCIIBlanks())
    }

    /// A proxy as given (`host:port` or a URL) as a URL: `http://` when it names no scheme, as curl's `-x`.
    static func withProxyScheme(_ proxy: String) -> String {
        proxy.utf8.firstRange(of: "://".utf8) != nil ? proxy : "http://" + proxy
    }

    /// Every secret on the command line (and in the proxy environment), never to be printed.
    func collectSecrets() -> Secrets {
        var secrets = Secrets()
        secrets.addPassword(ofUserArgument: user)
        secrets.addPassword(ofUserArgument: proxyUser)
        if case .user(_, let password)? = netrcEntry?.kind { secrets.add(password) }
        secrets.add(certPassword)
        if let cert { secrets.add(Self.splitCertArgument(cert).password) }
        secrets.addUserInfo(ofURL: url)
        secrets.addUserInfo(ofURL: proxy.map(Self.withProxyScheme))
        let environment = ProcessInfo.processInfo.environment
        for name in ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] {
            secrets.addUserInfo(ofURL: environment[name].map(Self.withProxyScheme))
        }
        for line in header {
            guard let (name, value) = Self.headerParts(line), Secrets.credentialHeaders.contains(name.lowercased()) else { continue }
            secrets.add(value)
            // `Bearer TOKEN`, `Basic BASE64`: the credential alone may be echoed too (RFC 9110 §11.4).
            if let (_, credential) = value.splitOnce(atASCII: UInt8(ascii: " ")) { secrets.add(credential.trimmingASCIIBlanks()) }
        }
        return secrets
    }

    /// The session configuration the flags ask for.
    func makeConfiguration(scheme: String, monitor: TransferMonitor, diagnostics: Diagnostics) throws -> TrustHTTPClientConfiguration {
        var configuration = TrustHTTPClientConfiguration()
        do {
            (configuration.serverTrust, configuration.pinFailureReporter) = try trustConfiguration()
        } catch let error as RevocationOptions.CRLFileError {
            diagnostics.error(error.description)
            throw ExitCode(82)  // curl's CURLE_SSL_CRL_BADFILE
        }
        if let cert {
            let identity = try loadIdentity(cert, diagnostics: diagnostics)
            for warning in identity.warnings { diagnostics.warning("\(warning)") }
            configuration.defaultClientIdentity = identity
        }
        configuration.maximumRedirects = maxRedirs
        configuration.fetchesMissingIntermediates = !noAIA
        configuration.connectTimeout = .milliseconds(Int64(connectTimeout * 1000))
        configuration.continueTimeout = .milliseconds(Int64(expect100Timeout * 1000))
        if let maxTime {
            // curl's -m: the whole transfer, the streamed body included.
            let limit = Duration.milliseconds(Int64(maxTime * 1000))
            configuration.requestTimeout = limit
            configuration.resourceTimeout = limit
        } else {
            // curl has no overall limit unless -m: ten years stands for none (the head wait must be a Duration).
            configuration.requestTimeout = .seconds(10 * 365 * 86_400)
            configuration.resourceTimeout = nil
        }
        // curl has no read timeout either: a stalled transfer is ended by --speed-time or -m only.
        configuration.readTimeout = nil
        configuration.resolve = try resolveEntries(diagnostics: diagnostics)
        configuration.authenticationSchemes = basic ? .basic : digest ? .digest : .any
        if http11 { configuration.httpVersion = .http1Only }
        if compressed { configuration.decompression = .enabled() }
        if let userAgent { configuration.userAgent = userAgent }
        configuration.proxyEnvironment = proxyEnvironment()
        configuration.allowsCredentialsOverHTTP = allowCleartextAuth
        configuration.challengeHandler = challengeHandler(monitor: monitor, diagnostics: diagnostics)
        return configuration
    }

    /// The session's challenge handler: records when the server's certificate arrived and when the
    /// handshake's trust step ended (for `-w`), explains every challenge with `-v`, and with `-k`
    /// accepts a server the configured evaluation refuses, printing why it would have been refused.
    func challengeHandler(monitor: TransferMonitor, diagnostics: Diagnostics) -> ClosureChallengeHandler {
        let verbose = self.verbose
        let insecure = self.insecure
        let pinsGiven = !trustOptions.pin.isEmpty || trustOptions.mode != nil
        // A user name from -u or netrc may be shown; one from the URL's user-info may not (with a user name in the
        // URL, a netrc credential is always for that name).
        let nameFromURL = user == nil && URLUserInfo.userInfo(in: url) != nil
        let shownUser: String? = if !nameFromURL, case .user(let name, _)? = credential?.kind { name } else { nil }
        return ClosureChallengeHandler { challenge in
            if challenge.serverTrust != nil { monitor.update { $0.trustChallengeAt = monitor.elapsed } }
            if verbose {
                diagnostics.verbose(
                    DisplayText("* challenge: \(challenge.protectionSpace)").description
                        + (challenge.previousFailureCount > 0 ? " (previous failures: \(challenge.previousFailureCount))" : ""))
                if let offered = challenge.httpChallenge {
                    diagnostics.verbose(DisplayText("*   offered: \(offered)").description)
                    if let proposed = challenge.proposedCredential, case .user(let name, _) = proposed.kind, challenge.previousFailureCount == 0 {
                        diagnostics.verbose(
                            DisplayText(
                                "*   answering with \(offered.scheme)\(offered["algorithm"].map { " \($0)" } ?? "") as \(name == shownUser ? name : "***")"
                            ).description)
                    } else {
                        diagnostics.verbose("*   no credential to answer with")
                    }
                }
                if challenge.protectionSpace.authenticationMethod == .clientCertificate {
                    if let proposed = challenge.proposedCredential, case .clientIdentity(let identity) = proposed.kind {
                        diagnostics.verbose(
                            DisplayText("* client certificate sent: \(identity.certificate.subject) \(identity.certificate.spkiPin)").description)
                    } else {
                        diagnostics.verbose("* no client certificate configured (--cert): none sent")
                    }
                }
            }
            var disposition = ChallengeDisposition.performDefaultHandling
            var shown = "performDefaultHandling"
            if let trust = challenge.serverTrust {
                let decision = verbose || insecure ? await challenge.defaultEvaluation() : nil
                if verbose {
                    diagnostics.verbose("* presented chain:")
                    for (index, certificate) in trust.presentedChain.enumerated() {
                        diagnostics.verbose(DisplayText("*   \(index): \(certificate.subject) \(certificate.spkiPin)").description)
                    }
                    if let decision {
                        diagnostics.verbose(
                            DisplayText("* default evaluation (\(decision.policy)): \(decision.isTrusted ? "trusted" : "NOT trusted")").description)
                        for reason in decision.reasons { diagnostics.verbose("*   [\(reason.code)] \(reason)") }
                        // A fetched intermediate and where from, among them: names and URLs from certificates, escaped.
                        for note in decision.notes { diagnostics.verbose(DisplayText("*   note: \(note)").description) }
                        if !decision.validatedPath.isEmpty {
                            diagnostics.verbose("* " + DecisionText.pathLine(decision))
                        }
                    }
                }
                if insecure, let decision, !decision.isTrusted {
                    // curl checks --pinnedpubkey even with -k: pins given here are still enforced.
                    let pinFailure = decision.reasons.contains { reason in
                        switch reason.kind {
                        case .pinMismatch, .pinnedCertificateNotInPath, .pinningRequired: return true
                        default: return false
                        }
                    }
                    if pinFailure && pinsGiven {
                        diagnostics.warning(DisplayText("--insecure does not override pinning: \(challenge.protectionSpace.host) is refused").description)
                    } else {
                        diagnostics.warning(
                            DisplayText("--insecure: \(challenge.protectionSpace.host) is NOT trusted (\(decision.policy)); proceeding anyway:").description)
                        for reason in decision.reasons { diagnostics.warning("  [\(reason.code)] \(reason)") }
                        monitor.update { $0.verifyResult = TrustVerdictCode.code(for: decision) }
                        disposition = .useCredential(Credential(trust: trust))
                        shown = "useCredential(serverTrust) (--insecure)"
                    }
                }
                monitor.update { $0.trustAnsweredAt = monitor.elapsed }
            }
            if verbose { diagnostics.verbose("* disposition: \(shown)") }
            return disposition
        }
    }

    /// The proxy for each request, as curl chooses it: -x wins over the proxy variables (read as ProxyEnvironment
    /// says: never HTTP_PROXY), and --noproxy over no_proxy/NO_PROXY, which apply to -x too. A proxy that cannot
    /// be used (a scheme other than http, a malformed URL or port) fails each request it applies to — exit 5 or
    /// 7, as curl's, in exitCode(for:) — and never sends it direct.
    func proxyEnvironment() -> ProxyEnvironment {
        let environment = ProxyEnvironment()
        var proxies = proxy.map { ProxyEnvironment(proxy: $0, noProxy: environment.noProxy) } ?? environment
        if let noproxy { proxies.noProxy = NoProxyList(noproxy) }
        if let proxyCredential = proxyUser.flatMap(Self.credential(fromUserArgument:)) { proxies.setCredential(proxyCredential) }
        return proxies
    }

    /// Whether a proxy the configuration names has a credential (`-U`, or user-info in its URL).
    static func proxyCredentialGiven(_ configuration: TrustHTTPClientConfiguration) -> Bool {
        let settings = [configuration.proxyEnvironment?.http, configuration.proxyEnvironment?.https]
        return configuration.proxy?.credential != nil
            || settings.contains { setting in
                if case .proxy(let proxy)? = setting { return proxy.credential != nil }
                return false
            }
    }

    /// The `--resolve` entries; one that does not parse (a port outside 1–65535 included) ends the command
    /// with curl's exit 49 (CURLE_SETOPT_OPTION_SYNTAX, "Couldn't parse CURLOPT_RESOLVE entry").
    func resolveEntries(diagnostics: Diagnostics) throws -> [String: String] {
        do {
            return try TrustOptions.resolveMap(resolve)
        } catch let error as UsageError {
            diagnostics.error("(49) Couldn't parse CURLOPT_RESOLVE entry: \(error)")
            throw ExitCode(49)
        }
    }

    /// The request the flags describe.
    ///
    /// `-H "Name:"` (nothing after the colon) sends no such field, and `-H "Name;"` sends it empty, as in
    /// curl; `-H "Expect:"` so turns off the `100 Continue` wait curl asks for before a body over 1 MiB
    /// or of unknown size.
    func makeRequest(_ requestURL: URL, upload: UploadFile? = nil) throws -> TrustHTTPClientRequest {
        var request = TrustHTTPClientRequest(url: requestURL)
        if let credential {
            request.credential = credential
            request.authenticatesPreemptively = basic
        }
        var withheld: Set<HTTPField.Name> = []
        for line in header {
            if line.utf8.last == UInt8(ascii: ";"), !line.containsASCII(UInt8(ascii: ":")) {
                let name = String(line[..<line.utf8.index(before: line.utf8.endIndex)]).trimmingASCIIBlanks()
                request.headers.append(HTTPField(name: try Self.fieldName(name, url: requestURL), value: ""))
                continue
            }
            guard let (name, value) = Self.headerParts(line) else { throw UsageError("-H takes 'Name: value'") }
            let fieldName = try Self.fieldName(name, url: requestURL)
            if value.isEmpty {
                withheld.insert(fieldName)
            } else {
                // RFC 9110 §5.5: CR, LF and NUL would split the request; `HTTPFields` would turn them into spaces,
                // so they are refused here, where the user can be told. The value is not quoted: it may be a secret.
                guard HTTPField.isValidValue(value) else {
                    throw TrustHTTPClientError(.badURL, "the value of the header field \(name) holds CR, LF, NUL or another control character", url: requestURL)
                }
                request.headers.append(HTTPField(name: fieldName, value: value))
            }
        }
        if let referer, request.headers[.referer] == nil { request.headers[.referer] = referer }
        if let upload {
            request.body = try upload.body()
        } else if let body = try requestBody() {
            request.body = .bytes(body)
            if request.headers[.contentType] == nil {
                request.headers[.contentType] = json.isEmpty ? "application/x-www-form-urlencoded" : "application/json"
            }
            if !json.isEmpty && request.headers[.accept] == nil { request.headers[.accept] = "application/json" }
        }
        if let body = request.body, !withheld.contains(.expect), (body.length ?? Int.max) > Self.expectThreshold {
            request.expectsContinue = true
        }
        request.method = requestMethod
        return request
    }

    /// The body size above which curl asks for `100 Continue` before sending it (RFC 9110 §10.1.1): 1 MiB.
    static let expectThreshold = 1024 * 1024

    /// curl's data flags: `-d`, `--data-binary` and `--data-raw` pieces joined with `&`, `--json` pieces appended
    /// with nothing between (curl 7.82+ adds no `&` before a `--json` piece). curl takes the pieces in
    /// command-line order; here `-d` pieces come first, then `--data-binary`, `--data-raw`, `--json`.
    /// `-d @FILE` drops the file's CR and LF characters, `--data-binary @FILE` and `--json @FILE` send it
    /// unchanged (curl's documented difference).
    func requestBody() throws -> Data? {
        func read(_ name: String) throws -> Data {
            if name == "-" { return Data(try StandardInput.readAll()) }
            guard let contents = FileManager.default.contents(atPath: name) else { throw UsageError("cannot read \(name)") }
            return contents
        }
        var pieces: [Data] = []
        for piece in data {
            if piece.hasPrefix("@") {
                pieces.append(Data(try read(String(piece.dropFirst())).filter { $0 != 0x0D && $0 != 0x0A }))
            } else {
                pieces.append(Data(piece.utf8))
            }
        }
        for piece in dataBinary { pieces.append(piece.hasPrefix("@") ? try read(String(piece.dropFirst())) : Data(piece.utf8)) }
        for piece in dataRaw { pieces.append(Data(piece.utf8)) }
        var body: Data? =
            pieces.isEmpty
            ? nil
            : pieces.dropFirst().reduce(into: pieces[0]) { body, piece in
                body.append(UInt8(ascii: "&"))
                body.append(piece)
            }
        for piece in json {
            body = (body ?? Data()) + (piece.hasPrefix("@") ? try read(String(piece.dropFirst())) : Data(piece.utf8))
        }
        return body
    }

    /// `-v`: the request line and the header fields this command sets, credentials as `***`
    /// (what the session adds itself — an `Authorization` it computes for a challenge — is shown
    /// with the challenge).
    func showRequest(_ request: TrustHTTPClientRequest, userAgent: String, diagnostics: Diagnostics) {
        let path = request.url.path(percentEncoded: true)
        let target = (path.isEmpty ? "/" : path) + (request.url.query(percentEncoded: true).map { "?" + $0 } ?? "")
        diagnostics.verbose("> \(request.method) \(target)")
        // As sent: Foundation's `host` is the ASCII (IDNA) form the session connects to and names in Host.
        let host = (request.url.host ?? "").lowercased()
        diagnostics.verbose("> host: \(host)\(request.url.port.map { ":\($0)" } ?? "")")
        if request.headers[.userAgent] == nil { diagnostics.verbose("> user-agent: \(userAgent)") }
        if request.authenticatesPreemptively && request.headers[.authorization] == nil {
            diagnostics.verbose("> authorization: ***")
        }
        for field in request.headers {
            diagnostics.verbose("> \(field.name.rawName): \(Secrets.displayValue(name: field.name.rawName, value: field.value))")
        }
        if let body = request.body {
            diagnostics.verbose(body.length.map { "> content-length: \($0)" } ?? "> transfer-encoding: chunked")
            if request.expectsContinue { diagnostics.verbose("> expect: 100-continue") }
        }
    }

    /// The response head as curl's `-i` shows it: the status line (HTTP/2 has no reason phrase,
    /// RFC 9113 §8.3.2), the fields as received, a blank line; CRLF line ends.
    static func headText(_ response: TrustHTTPClientStreamingResponse) -> String {
        var text: String
        if response.httpVersion.major == 2 {
            text = "HTTP/2 \(response.statusCode) \r\n"
        } else {
            text = "\(response.httpVersion.text) \(response.statusCode) \(HTTPResponseStatus(statusCode: response.statusCode).reasonPhrase)\r\n"
        }
        for field in response.headers { text += "\(field.name.rawName): \(field.value)\r\n" }
        return text + "\r\n"
    }

    /// `%{remote_ip}`/`%{remote_port}`: the proxy's address when one applies (`-x` or a variable), else the `--resolve`
    /// entry, the IP literal, or the host's first address from the resolver (looked up when asked:
    /// the session does not report the address it connected to).
    static func remoteEndpoint(url: URL?, resolve: [String: String], proxies: ProxyEnvironment) -> @Sendable () -> (address: String, port: Int)? {
        guard let url, let rawHost = url.host(percentEncoded: false), !rawHost.isEmpty else { return { nil } }
        // An IPv6 literal without its brackets; a name canonical (A-labels) as the session connects to it.
        let bare = String(rawHost.drop { $0 == "[" }.reversed().drop { $0 == "]" }.reversed())
        var host = (try? PeerName(host: bare))?.description ?? bare.lowercased()  // for the address only: no trailing dot
        var port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        var viaProxy = false
        if let configuration = try? proxies.proxy(scheme: url.scheme?.lowercased() ?? "http", host: host, port: port) {
            host = configuration.host
            port = configuration.port
            viaProxy = true
        }
        let mapped = viaProxy ? nil : resolve["\(host):\(port)"] ?? resolve[host]
        return { [host, port] in
            if let mapped { return (mapped, port) }
            var hints = addrinfo()
            hints.ai_flags = AI_NUMERICSERV
            #if canImport(Glibc)
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            #else
                hints.ai_socktype = SOCK_STREAM
            #endif
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return nil }
            defer { freeaddrinfo(list) }
            var name = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard getnameinfo(first.pointee.ai_addr, first.pointee.ai_addrlen, &name, socklen_t(name.count), nil, 0, NI_NUMERICHOST) == 0 else { return nil }
            return (String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), port)
        }
    }

    /// curl's `--cert FILE:PASSWORD`: split at the first colon whose left side is an existing file
    /// (a path that exists as given is never split); when no such file exists, at the first colon,
    /// as curl does — so that an error names the file, never the password.
    static func splitCertArgument(_ argument: String) -> (path: String, password: String?) {
        if FileManager.default.fileExists(atPath: argument) { return (argument, nil) }
        // Colons found by byte: a combining mark after one must not hide it (and the password with it).
        var index = argument.startIndex
        while let colon = argument[index...].firstIndex(ofASCII: UInt8(ascii: ":")) {
            let path = String(argument[..<colon])
            let afterColon = argument.utf8.index(after: colon)
            if FileManager.default.fileExists(atPath: path) {
                return (path, String(argument[afterColon...]))
            }
            index = afterColon
        }
        if let (path, password) = argument.splitOnce(atASCII: UInt8(ascii: ":")) {
            return (String(path), String(password))
        }
        return (argument, nil)
    }

    /// A PKCS#12 or PEM identity; a local certificate problem exits 58 (curl's "problem with the local certificate").
    func loadIdentity(_ argument: String, diagnostics: Diagnostics) throws -> ClientIdentity {
        // -m when it is shorter than the PKCS#12 default time limit (compared as Double: no conversion can trap).
        let maxTimeLimit: Duration? = maxTime.flatMap { seconds in
            (0..<PKCS12Budget.defaultTimeLimit / .milliseconds(1)).contains(seconds * 1000) ? .milliseconds(Int64(seconds * 1000)) : nil
        }
        do {
            let (path, inlinePassword) = Self.splitCertArgument(argument)
            let passphrase = certPassword ?? inlinePassword
            let lower = path.lowercased()
            // Bounded (a device refused, a FIFO read within a deadline); an unreadable file is reported by the loader below.
            let bytes = (try? LocalFile.read(path, limit: LocalFile.identityLimit)) ?? []
            let isPKCS12: Bool
            switch certType?.uppercased() {
            case "P12", "PKCS12", "PFX": isPKCS12 = true
            case "PEM": isPKCS12 = false
            case nil: isPKCS12 = lower.hasSuffix(".p12") || lower.hasSuffix(".pfx") || (bytes.first == 0x30 && key == nil)
            case let other?:
                diagnostics.error("--cert-type \(other): use P12 or PEM")
                throw ExitCode(2)
            }
            if isPKCS12 {
                // curl loads the certificate during the handshake, under -m: decoding one waits no longer (exit 28).
                // Without -m (or with a longer one) the library's default limit still bounds it (exit 58).
                var budget = PKCS12Budget()
                if let maxTimeLimit { budget.timeLimit = maxTimeLimit }
                return try ClientIdentity(pkcs12File: path, passphrase: passphrase, budget: budget)
            }
            return try ClientIdentity(certificateFile: path, keyFile: key, passphrase: passphrase)
        } catch let exit as ExitCode {
            throw exit
        } catch let error as ClientIdentityError where error.isTimeout && maxTimeLimit != nil {
            diagnostics.error("(28) Operation timed out after \(Int((maxTime ?? 0) * 1000)) milliseconds with 0 bytes received")
            throw ExitCode(28)
        } catch {
            diagnostics.error("client certificate: \(error)")
            throw ExitCode(58)
        }
    }

    /// The evaluator the flags ask for, and where a configuration file's pin-failure reports go.
    func trustConfiguration() throws -> (any TrustEvaluator, PinFailureReporter?) {
        if let config {
            try trustOptions.revocationOptions.refuse(with: "--config")
            try trustOptions.ctOptions.refuse(with: "--config")
            var reporting = TrustHTTPClientConfiguration()
            reporting.resolve = try TrustOptions.resolveMap(resolve)
            return (try TrustOptions.configuration(config), PinFailureReporter(configuration: reporting))
        }
        var anchors: [Certificate] = []
        for path in cacert { anchors += try TrustOptions.load(path, what: "--cacert") }
        let budget = RevocationOptions.fetchBudget(connectTimeout: connectTimeout, maxTime: maxTime)
        switch try trustOptions.policy(anchors: anchors, revocationBudget: budget) {
        case .securityPolicy(let policy): return (policy, nil)
        case .validator(let validator): return (validator, nil)
        case .fetching(let evaluator): return (evaluator, nil)
        }
    }

    /// The lines to print for `error` (with every trust reason) and curl's exit code for it.
    func report(_ error: TrustHTTPClientError) -> (Int32, [String]) {
        // The message and the underlying error can quote what a server sent (a realm, a header value): escaped.
        var lines = [DisplayText("\(error.code) (\(error.code.rawValue)): \(error.message)").description]
        if let underlying = error.underlying, verbose { lines.append(DisplayText("  \(underlying)").description) }
        if let decision = error.trustDecision {
            for reason in decision.reasons { lines.append("  [\(reason.code)] \(reason)") }
            // Each reason's likely fix, in the library's words (`TrustFailureReason.explanation`), once each.
            var fixes: [String] = []
            for fix in decision.reasons.map(\.explanation.fix) where !fixes.contains(fix) { fixes.append(fix) }
            lines += fixes.map { "  fix: " + $0 }
            if !decision.expectedPins.isEmpty {
                lines.append("  pins seen: " + decision.pinsSeen.map(\.description).joined(separator: ", "))
                lines.append("  pins expected: " + decision.expectedPins.map(\.description).joined(separator: ", "))
            }
            if verbose {
                lines.append("  presented chain:")
                for (index, certificate) in decision.presentedChain.enumerated() {
                    lines.append(DisplayText("    \(index): \(certificate.subject) \(certificate.spkiPin)").description)
                }
            }
        }
        return (Self.exitCode(for: error), lines)
    }

    /// Proxy schemes curl 7.88 speaks besides http (CURLPROXY_*), none of which trust does.
    static let proxySchemesCurlSpeaks: Set<String> = ["https", "socks4", "socks4a", "socks5", "socks5h"]

    /// curl's exit code for a session error.
    static func exitCode(for error: TrustHTTPClientError) -> Int32 {
        // A proxy that cannot be used (never replaced by a direct connection), as curl 7.88 exits: "Unsupported
        // proxy syntax" (a malformed URL, a port outside 1–65535) is CURLE_COULDNT_RESOLVE_PROXY (5); a scheme
        // curl does not know either, "Unsupported proxy scheme", CURLE_COULDNT_CONNECT (7). A SOCKS or https
        // proxy, which curl speaks and trust does not, is CURLE_PROXY (97), curl's exit for a proxy handshake
        // that cannot be completed.
        if let unusable = error.underlyingError as? ProxyEnvironment.UnusableProxy {
            switch unusable.problem.detail {
            case .malformed: return 5
            case .unsupportedScheme(let scheme) where Self.proxySchemesCurlSpeaks.contains(scheme.lowercased()): return 97
            default: return 7
            }
        }
        switch error.code {
        case .cannotFindHost: return 6
        case .cannotConnectToHost: return 7
        case .timedOut: return 28
        case .httpTooManyRedirects: return 47
        case .badURL: return 3
        case .unsupportedURL: return 1
        case .serverCertificateHasBadDate, .serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid:
            return 60
        case .cancelled where error.trustDecision != nil:
            return 60
        case .secureConnectionFailed, .clientCertificateRejected, .clientCertificateRequired:
            return 35
        // curl: a malformed HTTP/1.1 head (a NUL in a header) is CURLE_WEIRD_SERVER_REPLY (8), and so is an
        // HTTP/2 field value with a control character (the same head, refused alike); an HTTP/2
        // rule broken (a flood, a flow-control violation, GOAWAY abuse) is CURLE_HTTP2, "HTTP/2 framing
        // layer" (16).
        case .badServerResponse where error.protocolViolation == .malformedHTTP1Response || error.protocolViolation == .malformedHTTP2Response:
            return 8
        case .badServerResponse where error.protocolViolation == .http2:
            return 16
        // A body cut short by an orderly close is CURLE_PARTIAL_FILE (18); a connection that failed, 56.
        case .networkConnectionLost where error.isIncompleteBody:
            return 18
        case .networkConnectionLost, .badServerResponse:
            return 56
        // A body over a limit is curl's CURLE_FILESIZE_EXCEEDED (63); a head over curl's own header
        // limits (300 KiB, 100 KiB a field) is CURLE_RECV_ERROR (56) in curl 7.88.
        // curl's CURLE_BAD_CONTENT_ENCODING (61): a --compressed body it cannot decode; ours also when it
        // inflates past the ratio limit (curl has none).
        case .cannotDecodeContentData:
            return 61
        case .responseTooLarge where error.limit?.kind == .decompressionRatio:
            return 61
        case .responseTooLarge:
            return error.limit?.kind == .body ? 63 : 56
        case .userAuthenticationRequired, .userCancelledAuthentication:
            return 67
        // A body read from standard input must be sent again (a 401, a 307): CURLE_SEND_FAIL_REWIND (65);
        // an upload file that cannot be read, or that changed size while sent, CURLE_READ_ERROR (26).
        case .requestBodyStreamExhausted where error.underlyingError is UploadFile.CannotRewind:
            return 65
        case .requestBodyStreamExhausted, .fileDoesNotExist, .fileIsDirectory, .noPermissionsToReadFile:
            return 26
        default:
            return 1
        }
    }
}

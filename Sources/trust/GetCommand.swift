import ArgumentParser
import Foundation
import Trust
import TrustHTTP
import TrustNIO
import X509

/// `trust get URL`: an HTTPS request with full trust diagnostics; curl's flags and exit codes.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Send an HTTP(S) request with server trust evaluated in the handshake; curl-compatible exit codes.",
        discussion: """
            Redirects are followed (up to --max-redirs). --cacert adds anchors to the system roots; with --anchors-only
            they replace them. --mode switches to AFNetworking AFSecurityPolicy semantics.
            Exit codes (curl's): 0 done, 1 unsupported protocol, 2 bad usage, 3 malformed URL, 6 could not resolve host,
            7 could not connect, 22 HTTP status >= 400 with --fail, 28 timeout, 35 TLS handshake failure other than trust
            (including a server refusing or requiring a client certificate), 47 too many redirects, 56 connection lost,
            58 local client-certificate problem, 60 server trust failure (reasons on stderr), 67 authentication failed
            (--user given and the final response is still 401, or --proxy-user and 407).
            Proxies: -x/--proxy URL (http proxy; https through CONNECT, TLS and trust end to end), -U/--proxy-user,
            --noproxy; without -x the environment's http_proxy/https_proxy/no_proxy apply, as in curl.
            HTTP authentication: --user answers Basic and Digest challenges, the strongest offered first (--any-auth,
            the default); --digest answers Digest only; --basic answers Basic only and sends it before any challenge,
            as curl does. Basic is never sent over plain http unless --allow-cleartext-auth.
            """)

    @Argument(help: "The URL (http or https).")
    var url: String

    @Option(name: .shortAndLong, help: "Write the body to FILE instead of standard output.")
    var output: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: "A request header, 'Name: value'; repeatable.")
    var header: [String] = []

    @Option(name: [.customShort("X"), .customLong("request")], help: "The request method.")
    var method: String?

    @Option(name: [.customShort("d"), .customLong("data")], help: "Request body (sends POST unless -X says otherwise); @FILE reads a file.")
    var data: String?

    @Option(name: .long, help: "Anchor certificates (PEM/DER file or folder) added to the system roots; repeatable.")
    var cacert: [String] = []


    @OptionGroup var trustOptions: TrustOptions

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

    @Option(name: .long, help: "Connect HOST:PORT to ADDRESS instead (curl syntax HOST:PORT:ADDRESS); repeatable.")
    var resolve: [String] = []

    @Option(name: .long, help: "Seconds allowed to connect (TCP + TLS).")
    var connectTimeout: Double = 10

    @Option(name: [.customShort("m"), .customLong("max-time")], help: "Seconds allowed for the whole request.")
    var maxTime: Double = 60

    @Flag(name: [.customShort("v"), .customLong("verbose")], help: "Show TLS version, ALPN, the presented chain with pins, every challenge and its disposition (on stderr).")
    var verbose = false

    func validate() throws {
        if maxRedirs < 0 { throw ValidationError("--max-redirs must be 0 or more") }
        if config != nil && (!cacert.isEmpty || !trustOptions.pin.isEmpty || trustOptions.mode != nil || trustOptions.anchorsOnly) {
            throw ValidationError("--config replaces --cacert, --anchors-only, --pin and --mode; use one or the other")
        }
        if [basic, digest, anyAuth].filter({ $0 }).count > 1 { throw ValidationError("use one of --basic, --digest, --any-auth") }
        if let user, !user.contains(":") { throw ValidationError("--user takes USER:PASSWORD") }
        if let proxyUser, !proxyUser.contains(":") { throw ValidationError("--proxy-user takes USER:PASSWORD") }
        if connectTimeout <= 0 || maxTime <= 0 { throw ValidationError("timeouts must be positive") }
    }

    func run() async throws {
        guard let requestURL = URL(string: url), let scheme = requestURL.scheme?.lowercased() else {
            printError("malformed URL \(url)")
            throw ExitCode(3)
        }
        guard scheme == "https" || scheme == "http" else {
            printError("unsupported protocol \(scheme)")
            throw ExitCode(1)
        }
        var configuration = SessionConfiguration()
        configuration.serverTrust = try trustConfiguration()
        if let cert {
            let identity = try loadIdentity(cert)
            for warning in identity.warnings { printError("warning: \(warning)") }
            configuration.defaultClientIdentity = identity
        }
        configuration.maximumRedirects = maxRedirs
        configuration.connectTimeout = .milliseconds(Int64(connectTimeout * 1000))
        configuration.requestTimeout = .milliseconds(Int64(maxTime * 1000))
        configuration.resolve = try TrustOptions.resolveMap(resolve)
        configuration.authenticationSchemes = basic ? .basic : digest ? .digest : .any
        let noProxy = noproxy.map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } } ?? []
        let proxyCredential = proxyUser.flatMap { value -> Credential? in
            guard let colon = value.firstIndex(of: ":") else { return nil }
            return Credential(user: String(value[..<colon]), password: String(value[value.index(after: colon)...]), persistence: .none)
        }
        if let proxy {
            do {
                configuration.proxy = try ProxyConfiguration(url: proxy, credential: proxyCredential, noProxy: noProxy)
            } catch {
                throw UsageError("--proxy: \(error)")
            }
        } else {
            let environment = ProxyConfiguration.environment()
            if var chosen = scheme == "https" ? environment.https : environment.http {
                if let proxyCredential { chosen.credential = proxyCredential }
                if noproxy != nil { chosen.noProxy = noProxy }
                configuration.proxy = chosen
            }
        }
        configuration.allowsCredentialsOverHTTP = allowCleartextAuth
        let verbose = self.verbose
        if verbose {
            configuration.challengeHandler = ClosureChallengeHandler { challenge in
                printError("* challenge: \(challenge.protectionSpace)" + (challenge.previousFailureCount > 0 ? " (previous failures: \(challenge.previousFailureCount))" : ""))
                if let offered = challenge.httpChallenge {
                    printError("*   offered: \(offered)")
                    if let proposed = challenge.proposedCredential, case .user(let name, _) = proposed.kind, challenge.previousFailureCount == 0 {
                        printError("*   answering with \(offered.scheme)\(offered["algorithm"].map { " \($0)" } ?? "") as \(name)")
                    } else {
                        printError("*   no credential to answer with")
                    }
                }
                if challenge.protectionSpace.authenticationMethod == .clientCertificate {
                    if let proposed = challenge.proposedCredential, case .clientIdentity(let identity) = proposed.kind {
                        printError("* client certificate sent: \(identity.certificate.subject) \(identity.certificate.spkiPin)")
                    } else {
                        printError("* no client certificate configured (--cert): none sent")
                    }
                }
                if let trust = challenge.serverTrust {
                    printError("* presented chain:")
                    for (index, certificate) in trust.presentedChain.enumerated() {
                        printError("*   \(index): \(certificate.subject) \(certificate.spkiPin)")
                    }
                    if let decision = await challenge.defaultEvaluation() {
                        printError("* default evaluation (\(decision.policy)): \(decision.isTrusted ? "trusted" : "NOT trusted")")
                        for reason in decision.reasons { printError("*   [\(reason.code)] \(reason)") }
                        if !decision.validatedPath.isEmpty {
                            printError("* validated path: " + decision.validatedPath.map { $0.subject.description }.joined(separator: " → "))
                        }
                    }
                }
                printError("* disposition: performDefaultHandling")
                return .performDefaultHandling
            }
        }

        var request = Request(url: requestURL)
        if let user, let colon = user.firstIndex(of: ":") {
            request.credential = Credential(user: String(user[..<colon]), password: String(user[user.index(after: colon)...]), persistence: .none)
            request.authenticatesPreemptively = basic
        }
        for line in header {
            guard let colon = line.firstIndex(of: ":") else { throw UsageError("-H takes 'Name: value'") }
            request.headers.append((String(line[..<colon]).trimmingCharacters(in: .whitespaces), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)))
        }
        if let data {
            if data.hasPrefix("@") {
                guard let contents = FileManager.default.contents(atPath: String(data.dropFirst())) else { throw UsageError("cannot read \(data.dropFirst())") }
                request.body = contents
            } else {
                request.body = Data(data.utf8)
            }
            request.method = "POST"
            if request.value(forHeader: "content-type") == nil {
                request.headers.append(("content-type", "application/x-www-form-urlencoded"))
            }
        }
        if let method { request.method = method.uppercased() }

        let session = try Session(configuration: configuration)
        defer { Task { await session.shutdown() } }
        let response: Response
        // Pin-failure reports (with --config) go out before the command ends.
        let reporter: PinFailureReporter? = {
            if case .configuration(_, let reporter) = configuration.serverTrust { return reporter }
            return nil
        }()
        do {
            response = try await session.data(for: request)
        } catch let error as SessionError {
            await session.shutdown()
            await reporter?.flush()
            throw report(error)
        }
        await session.shutdown()
        await reporter?.flush()
        if verbose {
            printError("* \(response.httpVersion)\(response.tlsVersion.map { " over \($0)" } ?? "")")
            for redirect in response.redirects { printError("* redirected from \(redirect.absoluteString)") }
            printError("< \(response.httpVersion) \(response.statusCode)")
            for (name, value) in response.headers { printError("< \(name): \(value)") }
        }
        if (user != nil && response.statusCode == 401) || (configuration.proxy?.credential != nil && response.statusCode == 407) {
            printError("authentication failed: \(response.statusCode) from \(response.statusCode == 407 ? "the proxy" : response.url.absoluteString)")
            throw ExitCode(67)
        }
        if response.statusCode == 407 && response.url.scheme?.lowercased() == "https" {
            printError("CONNECT tunnel failed: the proxy requires authentication (407); give --proxy-user")
            throw ExitCode(56)
        }
        if fail && response.statusCode >= 400 {
            printError("the requested URL returned error: \(response.statusCode)")
            throw ExitCode(22)
        }
        if let output {
            do {
                try response.body.write(to: URL(fileURLWithPath: output))
            } catch {
                printError("cannot write \(output): \(error.localizedDescription)")
                throw ExitCode(23)
            }
        } else {
            FileHandle.standardOutput.write(response.body)
        }
    }

    /// curl's `--cert FILE:PASSWORD`: split at the first colon whose left side is an existing file
    /// (a path that exists as given is never split).
    static func splitCertArgument(_ argument: String) -> (path: String, password: String?) {
        if FileManager.default.fileExists(atPath: argument) { return (argument, nil) }
        var index = argument.startIndex
        while let colon = argument[index...].firstIndex(of: ":") {
            let path = String(argument[..<colon])
            if FileManager.default.fileExists(atPath: path) {
                return (path, String(argument[argument.index(after: colon)...]))
            }
            index = argument.index(after: colon)
        }
        return (argument, nil)
    }

    /// A PKCS#12 or PEM identity; a local certificate problem exits 58 (curl's "problem with the local certificate").
    func loadIdentity(_ argument: String) throws -> ClientIdentity {
        do {
            let (path, inlinePassword) = Self.splitCertArgument(argument)
            let passphrase = certPassword ?? inlinePassword
            let lower = path.lowercased()
            let bytes = FileManager.default.contents(atPath: path).map(Array.init) ?? []
            let isPKCS12: Bool
            switch certType?.uppercased() {
            case "P12", "PKCS12", "PFX": isPKCS12 = true
            case "PEM": isPKCS12 = false
            case nil: isPKCS12 = lower.hasSuffix(".p12") || lower.hasSuffix(".pfx") || (bytes.first == 0x30 && key == nil)
            case let other?:
                printError("--cert-type \(other): use P12 or PEM")
                throw ExitCode(2)
            }
            if isPKCS12 {
                return try ClientIdentity(pkcs12File: path, passphrase: passphrase)
            }
            return try ClientIdentity(certificateFile: path, keyFile: key, passphrase: passphrase)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            printError("client certificate: \(error)")
            throw ExitCode(58)
        }
    }

    func trustConfiguration() throws -> ServerTrustConfiguration {
        if let config {
            var reporting = SessionConfiguration()
            reporting.resolve = try TrustOptions.resolveMap(resolve)
            return .configuration(try TrustOptions.configuration(config), reporter: PinFailureReporter(configuration: reporting))
        }
        var anchors: [Certificate] = []
        for path in cacert { anchors += try TrustOptions.load(path, what: "--cacert") }
        switch try trustOptions.policy(anchors: anchors) {
        case .securityPolicy(let policy): return .securityPolicy(policy)
        case .validator(let validator): return .evaluator(validator)
        }
    }

    /// Prints the error (with every trust reason) and returns curl's exit code for it.
    func report(_ error: SessionError) -> ExitCode {
        printError("\(error.code) (\(error.code.rawValue)): \(error.message)")
        if let underlying = error.underlying, verbose { printError("  \(underlying)") }
        if let decision = error.trustDecision {
            for reason in decision.reasons { printError("  [\(reason.code)] \(reason)") }
            if !decision.expectedPins.isEmpty {
                printError("  pins seen: " + decision.pinsSeen.map(\.description).joined(separator: ", "))
                printError("  pins expected: " + decision.expectedPins.map(\.description).joined(separator: ", "))
            }
            if verbose {
                printError("  presented chain:")
                for (index, certificate) in decision.presentedChain.enumerated() {
                    printError("    \(index): \(certificate.subject) \(certificate.spkiPin)")
                }
            }
        }
        switch error.code {
        case .cannotFindHost: return ExitCode(6)
        case .cannotConnectToHost: return ExitCode(7)
        case .timedOut: return ExitCode(28)
        case .httpTooManyRedirects: return ExitCode(47)
        case .badURL: return ExitCode(3)
        case .unsupportedURL: return ExitCode(1)
        case .serverCertificateHasBadDate, .serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid:
            return ExitCode(60)
        case .cancelled where error.trustDecision != nil:
            return ExitCode(60)
        case .secureConnectionFailed, .clientCertificateRejected, .clientCertificateRequired:
            return ExitCode(35)
        case .networkConnectionLost, .badServerResponse:
            return ExitCode(56)
        case .userAuthenticationRequired, .userCancelledAuthentication:
            return ExitCode(67)
        default:
            return ExitCode(1)
        }
    }
}


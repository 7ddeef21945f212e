import ArgumentParser
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import Trust
import TrustHTTP
import TrustNIO
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `trust inspect https://host[:port]`: what a server presents, what validates, and — in plain
/// words — why it is (not) trusted and what would fix it.
struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Connect to a TLS server and explain its certificates and the trust verdict, with the likely fix.",
        discussion: """
            Shows the TLS version and ALPN protocol, every presented certificate (subject, issuer, validity and days left,
            names, key, signature algorithm, SPKI pin, SHA-256 fingerprint), the validated path, and the verdict under the
            default policy or the options given. Exit 0 trusted, 1 not trusted, 2 bad usage, 6/7/28/35 as curl when the
            connection itself fails.
            """)

    @Argument(help: "https://host[:port] (a bare host:port also works).")
    var target: String

    @Option(help: "Anchor certificates (file or folder) added to the system roots; repeatable.")
    var cacert: [String] = []

    @Flag(help: "Use only the --cacert anchors.")
    var anchorsOnly = false

    @Option(help: "An SPKI pin that must be on the validated path; repeatable.")
    var pin: [String] = []

    @Option(help: "Judge under a trust configuration file.")
    var config: String?

    @Option(help: "Check this name instead of the URL's host (SNI still uses the URL's host).")
    var host: String?

    @Option(help: "HOST:PORT:ADDRESS, as curl's --resolve; repeatable.")
    var resolve: [String] = []

    @Option(help: "Seconds to connect and handshake.")
    var connectTimeout: Double = 10

    /// `--connect-timeout` as `trust get`'s (curl's usage errors; used as at most 31 years, so no conversion traps).
    func validate() throws {
        try GetConnectionOptions.validateSeconds(connectTimeout, option: "--connect-timeout")
    }

    @Flag(help: "Print a JSON report.")
    var json = false

    @Flag(name: .customLong("no-aia"), help: ArgumentHelp(stringLiteral: MissingIntermediates.noAIAHelp))
    var noAIA = false

    @OptionGroup var revocationOptions: RevocationOptions

    @OptionGroup var ctOptions: CTOptions

    @Flag(help: "Also print each presented certificate as PEM (as openssl s_client -showcerts).")
    var showcerts = false

    struct Observed: Sendable {
        var chain: [Certificate] = []
        var tlsVersion: String?
        var alpn: String?
        /// Whether the server asked for a client certificate (none is sent).
        var clientCertificateRequested = false
    }

    func run() async throws {
        let server = try ServerTarget(target, host: host, resolve: resolve, option: "inspect")
        let (text, nameToCheck, peerName) = (server.text, server.nameToCheck, server.peerName)
        let observed = try await server.handshake(connectTimeout: connectTimeout)
        guard !observed.chain.isEmpty else {
            printError(TrustFailureReason.emptyChain.explanation.description)
            throw ExitCode(35)
        }
        let trust = ServerTrust(presentedChain: observed.chain, peerName: peerName)
        let ct = config == nil ? try ctOptions.policy() : CertificateTransparencyPolicy.off
        let (decision, policyName, revocation) = try await evaluate(trust, ct: ct)
        let statuses = Self.revocationLines(decision, revocation: revocation)
        let scts = Self.sctReport(decision, presented: observed.chain, ct: ct)

        if json {
            let report = InspectReport(
                url: text, tlsVersion: observed.tlsVersion, alpn: observed.alpn, checkedName: nameToCheck,
                presentedChain: observed.chain.map(CertificateSummary.init), validatedPath: decision.validatedPath.map(CertificateSummary.init),
                presentedChainPEM: showcerts ? observed.chain.map(\.pemString) : nil,
                clientCertificateRequested: observed.clientCertificateRequested,
                policy: policyName, trusted: decision.isTrusted, reasons: decision.reasons.map(\.code),
                revocation: statuses.isEmpty ? nil : statuses.map(InspectReport.Revocation.init),
                scts: scts.map { $0.entries.map(InspectReport.SCT.init) },
                explanation: Self.explain(decision, trust: trust, name: nameToCheck), notes: decision.notes)
            try JSONOutput.print(report)
        } else {
            render(observed, decision: decision, trust: trust, policy: policyName, name: nameToCheck, revocation: (revocation, statuses), scts: scts)
        }
        if !decision.isTrusted { throw ExitCode(1) }
    }

    // MARK: - The handshake

    /// Connects, completes the handshake accepting whatever is presented (nothing is sent), and records it.
    /// A failure is the ``TrustHTTPClientError`` a `TrustHTTPClient` would give for it (`TrustHTTP` classifies it).
    static func handshake(address: String, port: Int, serverName: String, url: URL, timeout: Double) async throws(TrustHTTPClientError) -> Observed {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.certificateVerification = .noHostnameVerification
        tls.applicationProtocols = ["h2", "http/1.1"]
        let requested = NIOLockedValueBox(false)
        // BoringSSL asks for the client's certificate only when the server sent a CertificateRequest
        // (RFC 8446 §4.3.2, RFC 5246 §7.4.4): noted, and answered with none. (The CA names the request
        // carries are not reachable through swift-nio-ssl's API.)
        tls.sslContextCallback = { _, promise in
            requested.withLockedValue { $0 = true }
            promise.succeed(NIOSSLContextConfigurationOverride())
        }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: tls)
        } catch {
            throw TrustHTTPClientError(.secureConnectionFailed, "could not set up TLS", url: url, underlyingError: error)
        }
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let done = eventLoop.makePromise(of: Observed.self)
        let chainBox = NIOLockedValueBox<[Certificate]>([])
        let sni = IPAddress(serverName) == nil ? serverName : nil
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoop)
                .connectTimeout(.milliseconds(Int64(timeout * 1000)))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = try NIOSSLClientHandler(
                            context: context, serverHostname: sni,
                            customVerificationCallbackWithMetadata: { presented, promise in
                                let parsed = presented.compactMap { try? Certificate(derEncoded: $0.toDERBytes()) }
                                chainBox.withLockedValue { $0 = parsed }
                                promise.succeed(.certificateVerified(VerificationMetadata(nil)))
                            })
                        try channel.pipeline.syncOperations.addHandler(handler)
                        try channel.pipeline.syncOperations.addHandler(InspectHandshakeObserver(done: done, chain: chainBox, requested: requested))
                    }
                }
                .connect(host: address, port: port).get()
        } catch {
            done.fail(error)
            throw TrustHTTPClientError(connecting: error, url: url)
        }
        let timer = eventLoop.scheduleTask(in: .milliseconds(Int64(timeout * 1000))) { done.fail(HandshakeTimeout()) }
        defer {
            timer.cancel()
            channel.close(promise: nil)
        }
        do {
            return try await done.futureResult.get()
        } catch is HandshakeTimeout {
            throw TrustHTTPClientError(.timedOut, "the TLS handshake with \(serverName):\(port) timed out", url: url)
        } catch {
            throw TrustHTTPClientError(handshake: error, url: url, clientCertificateRequested: requested.withLockedValue { $0 })
        }
    }

    /// The handshake did not complete within the connect timeout.
    struct HandshakeTimeout: Error {}

    // MARK: - The verdict

    func evaluate(_ trust: ServerTrust, ct: CertificateTransparencyPolicy) async throws -> (TrustDecision, String, RevocationPolicy) {
        let resolve = try TrustOptions.resolveMap(resolve)
        func completed(_ evaluate: @escaping @Sendable (ServerTrust) async -> TrustDecision) async -> TrustDecision {
            await MissingIntermediates.decision(for: trust, fetches: !noAIA, resolve: resolve, evaluate)
        }
        if let config {
            try revocationOptions.refuse(with: "--config")
            try ctOptions.refuse(with: "--config")
            let configuration = try TrustOptions.configuration(config)
            let matched = NIOLockedValueBox<HostPattern?>(nil)
            let decision = await completed { trust in
                let evaluation = await configuration.evaluation(for: trust, port: 443)
                matched.withLockedValue { $0 = evaluation.matched }
                return evaluation.decision
            }
            return (decision, "configuration " + (matched.withLockedValue { $0 }.map { "\"\($0)\"" } ?? "base") + " from \(config)", .off)
        }
        var anchors: [Certificate] = []
        for path in cacert { anchors += try TrustOptions.load(path, what: "--cacert") }
        let trustAnchors: TrustAnchors = anchorsOnly ? .only(anchors) : .system(adding: anchors)
        var policy = ValidationPolicy.webPKI
        for text in pin {
            do { policy.pins.insert(try SPKIPin(parsing: text)) } catch { throw UsageError("--pin: \(error)") }
        }
        do {
            policy.revocation = try revocationOptions.policy()
        } catch let error as RevocationOptions.CRLFileError {
            throw UsageError(error.description)
        }
        policy.certificateTransparency = ct
        let name =
            (anchorsOnly ? "your anchors only" : anchors.isEmpty ? "the system roots" : "the system roots + your anchors")
            + (pin.isEmpty ? "" : ", \(pin.count) pin(s)")
        if revocationOptions.fetches {
            let evaluator = try revocationOptions.fetchingEvaluator(anchors: trustAnchors, policy: policy, name: name)
            let decision = await completed { await evaluator.evaluate($0) }
            await evaluator.shutdown()
            return (decision, name + " + " + revocationOptions.fetchedSources, evaluator.validator.policy.revocation)
        }
        let validator = PathValidator(anchors: trustAnchors, policy: policy, name: name)
        return (await completed { await validator.evaluate($0) }, name, policy.revocation)
    }

    /// The leaf's embedded SCTs as CT checking finds them (against `ct`'s log list, or none: every log unknown),
    /// with the issuer from the validated path (else the presented chain); `nil` for a leaf without SCTs when CT is off.
    static func sctReport(_ decision: TrustDecision, presented: [Certificate], ct: CertificateTransparencyPolicy) -> CertificateTransparencyReport? {
        let path = decision.validatedPath.count >= 2 ? decision.validatedPath : presented
        guard let leaf = path.first, path.count >= 2 else { return nil }
        let report = CertificateTransparencyReport.check(leaf: leaf, issuer: path[1], policy: ct, at: decision.evaluationTime)
        return report.entries.isEmpty && ct.mode == .off && report.malformed == nil ? nil : report
    }

    /// Each certificate's revocation status on the validated (or closest) path, when revocation is checked.
    static func revocationLines(_ decision: TrustDecision, revocation: RevocationPolicy) -> [RevocationStatus] {
        guard revocation.mode != .off else { return [] }
        let path = decision.validatedPath.isEmpty ? decision.closestPath : decision.validatedPath
        return revocation.statuses(of: path, at: decision.evaluationTime)
    }

    /// What went wrong in plain words, each with the likely fix: every reason's `TrustFailureReason.explanation`
    /// (``DecisionText/explanation(_:presented:name:)``).
    static func explain(_ decision: TrustDecision, trust: ServerTrust, name: String) -> [String] {
        DecisionText.explanation(decision, presented: trust.presentedChain, name: name)
    }

    // MARK: - Output

    func render(
        _ observed: Observed, decision: TrustDecision, trust: ServerTrust, policy: String, name: String,
        revocation: (policy: RevocationPolicy, statuses: [RevocationStatus]), scts: CertificateTransparencyReport?
    ) {
        let colour = isatty(STDOUT_FILENO) != 0 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
        func paint(_ text: String, _ code: String) -> String { colour ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
        let now = Date()
        print("TLS:      \(observed.tlsVersion ?? "?"), ALPN \(observed.alpn ?? "none"), cipher not reported by NIOSSL")
        print(DisplayText("checking: \(name) under \(policy)"))
        print("")
        print("presented chain (\(observed.chain.count)):")
        for (index, certificate) in observed.chain.enumerated() {
            let days = Int(certificate.notValidAfter.timeIntervalSince(now) / 86_400)
            let validity =
                days < 0 ? paint("EXPIRED \(-days) day\(days == -1 ? "" : "s") ago", "31") : days < 30 ? paint("\(days) days left", "33") : "\(days) days left"
            for line in DecisionText.inspectedCertificate(certificate, index: index, validity: validity) { print(line) }
            if showcerts { print(certificate.pemString, terminator: "") }
        }
        if observed.clientCertificateRequested {
            print("")
            print("client certificate: the server asked for one (none was sent; the CA names it suggested are not shown)")
        }
        print("")
        print(DecisionText.pathLine(decision))
        if !revocation.statuses.isEmpty {
            print("")
            print("revocation (\(revocation.policy.mode.rawValue), \(revocation.policy.depth.rawValue)):")
            for status in revocation.statuses {
                let word: String
                switch status.state {
                case .good: word = paint("good", "32")
                case .revoked: word = paint("REVOKED", "31")
                case .unknown: word = paint("unknown", "33")
                case .notChecked: word = "not checked"
                }
                print(DisplayText("  \(status.subject): \(escaped: word) — \(status.detail)"))
            }
        }
        if let scts {
            print("")
            print("certificate transparency: \(scts.summary)")
            for entry in scts.entries {
                let word: String
                switch entry.status {
                case .valid: word = paint("valid", "32")
                case .invalid(let why): word = paint("invalid", "31") + " — " + DisplayText.escaped(why)
                case .unknownLog: word = paint("unknown log", "33")
                }
                let log = entry.log.map { "\($0.description) (\($0.operatorName))" } ?? entry.sct.logIDBase64
                print(DisplayText("  SCT from \(log) at \(RFC3339.string(entry.sct.timestamp)): \(escaped: word)"))
            }
        }
        print("")
        print(decision.isTrusted ? paint("TRUSTED", "32") : paint("NOT TRUSTED", "31"))
        for line in Self.explain(decision, trust: trust, name: name) { print("  • " + line) }
        for note in decision.notes { print(DisplayText("  note: \(note)")) }
    }
}

struct InspectReport: Codable {
    var url: String
    var tlsVersion: String?
    var alpn: String?
    var checkedName: String
    var presentedChain: [CertificateSummary]
    var validatedPath: [CertificateSummary]
    /// With --showcerts: each presented certificate as PEM.
    var presentedChainPEM: [String]?
    var clientCertificateRequested: Bool
    var policy: String
    var trusted: Bool
    var reasons: [String]
    /// With revocation checking: each certificate of the validated (or closest) path, leaf first.
    var revocation: [Revocation]?
    /// The leaf's embedded SCTs (when it has any, or CT is checked).
    var scts: [SCT]?
    var explanation: [String]
    /// What the evaluation observed beyond its reasons: an intermediate fetched and where from, a rule's remark.
    var notes: [String]

    /// One embedded SCT.
    struct SCT: Codable {
        var logID: String
        var log: String?
        var `operator`: String?
        var timestamp: String
        /// valid, invalid or unknown-log.
        var status: String
        var detail: String?

        init(_ entry: CertificateTransparencyReport.Entry) {
            logID = entry.sct.logIDBase64
            log = entry.log?.description
            self.operator = entry.log?.operatorName
            timestamp = RFC3339.string(entry.sct.timestamp)
            switch entry.status {
            case .valid: status = "valid"
            case .invalid(let why): (status, detail) = ("invalid", why)
            case .unknownLog: status = "unknown-log"
            }
        }
    }

    /// One certificate's revocation status.
    struct Revocation: Codable {
        var subject: String
        /// good, revoked, unknown or not-checked.
        var status: String
        var detail: String

        init(_ status: RevocationStatus) {
            subject = status.subject
            switch status.state {
            case .good: self.status = "good"
            case .revoked: self.status = "revoked"
            case .unknown: self.status = "unknown"
            case .notChecked: self.status = "not-checked"
            }
            detail = status.detail
        }
    }
}

/// Completes the inspection once the handshake is done: the chain, the TLS version, the ALPN protocol.
final class InspectHandshakeObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let done: EventLoopPromise<InspectCommand.Observed>
    let chain: NIOLockedValueBox<[Certificate]>
    let requested: NIOLockedValueBox<Bool>

    init(done: EventLoopPromise<InspectCommand.Observed>, chain: NIOLockedValueBox<[Certificate]>, requested: NIOLockedValueBox<Bool>) {
        self.done = done
        self.chain = chain
        self.requested = requested
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted(let protocolName) = event {
            let text = (try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self).tlsVersion)??.displayName
            done.succeed(
                InspectCommand.Observed(
                    chain: chain.withLockedValue { $0 }, tlsVersion: text, alpn: protocolName,
                    clientCertificateRequested: requested.withLockedValue { $0 }))
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        done.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        done.fail(ChannelError.eof)
        context.fireChannelInactive()
    }
}

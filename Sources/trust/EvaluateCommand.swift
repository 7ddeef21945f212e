import ArgumentParser
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `trust evaluate`: judge a certificate chain as a client would, offline.
struct EvaluateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evaluate",
        abstract: "Evaluate a presented certificate chain: decision, every reason, and the validated path.",
        discussion: """
            Without --anchors the system roots are the anchors; --anchors adds to them, and with --anchors-only
            replaces them. --mode switches to AFNetworking AFSecurityPolicy semantics. --crlfile checks revocation \
            as curl's (hard, the whole chain). --spiffe-id with --spiffe-bundle judges the chain as an X.509-SVID: \
            its SPIFFE ID, on a path to its own trust domain's bundle, no host name. Prints the decision, every \
            reason and the validated path (or the closest path, when refused).
            Exit codes: 0 trusted, 1 not trusted (a revoked certificate too), 2 bad usage or unreadable input (an \
            unreadable CRL file included).
            """)

    @Option(name: .long, help: "The presented chain, leaf first (PEM or DER).")
    var chain: String

    @Option(name: .long, help: "The DNS name the client connects to.")
    var host: String?

    @Option(name: .long, help: "The IP address the client connects to.")
    var ip: String?

    @Option(name: .long, help: "Anchor certificates (file or folder); repeatable.")
    var anchors: [String] = []

    @Option(name: .long, help: "Evaluation time, RFC 3339 with offset (fractional seconds allowed). Default: now.")
    var at: String?

    @Flag(help: "Print the decision as JSON.")
    var json = false

    @Flag(name: .customLong("aia"), help: ArgumentHelp(stringLiteral: MissingIntermediates.aiaHelp))
    var aia = false

    @Option(
        name: .long, help: "Evaluate under a trust configuration file (the entry matching --host decides anchors, pins, mode); replaces --anchors/--pin/--mode."
    )
    var config: String?

    @OptionGroup var trustOptions: TrustOptions

    func validate() throws {
        let nameOptions = [host != nil, ip != nil, trustOptions.noValidateDomain].filter { $0 }.count
        if nameOptions == 0 && !trustOptions.spiffeOptions.isUsed {
            throw ValidationError("give --host NAME, --ip ADDRESS, --no-validate-domain or --spiffe-id ID")
        }
        if trustOptions.spiffeOptions.isUsed && (config != nil || !anchors.isEmpty) {
            throw ValidationError("--spiffe-bundle replaces --anchors and --config")
        }
        if host != nil && ip != nil { throw ValidationError("--host and --ip cannot be combined") }
        if config != nil && (!anchors.isEmpty || trustOptions.anchorsOnly || !trustOptions.pin.isEmpty || trustOptions.mode != nil) {
            throw ValidationError("--config replaces --anchors, --anchors-only, --pin and --mode")
        }
    }

    func run() async throws {
        var peerName: PeerName?
        if let host {
            do { peerName = try PeerName(host: host) } catch { throw UsageError("--host: \(error.description)") }
        } else if let ip {
            guard let address = IPAddress(ip) else { throw UsageError("--ip \"\(ip)\" is not an IPv4 or IPv6 address") }
            peerName = .ipAddress(address)
        }
        let chainInput = PresentedChainInput(entries: try entries(chain, what: "--chain"))
        if let refusal = chainInput.refusal(peerName: peerName) {
            // The leaf itself is in a form that is never trusted: refuse it, with why.
            try finish(refusal, notes: [])
            return
        }
        var notes = chainInput.notes
        let presented = chainInput.certificates
        var anchorCertificates: [Certificate] = []
        for path in anchors {
            for entry in try entries(path, what: "--anchors") {
                if let certificate = entry.certificate {
                    anchorCertificates.append(certificate)
                } else {
                    printError(DisplayText("--anchors \(path): skipping \(entry.subject), a certificate in a form that cannot be processed").description)
                }
            }
        }
        var time = Date()
        if let at {
            guard let parsed = RFC3339.parse(at) else { throw UsageError("--at \"\(at)\" is not an RFC 3339 time with an offset, e.g. 2025-01-01T00:00:00Z") }
            time = parsed
        }
        if let config {
            try trustOptions.revocationOptions.refuse(with: "--config")
            try trustOptions.ctOptions.refuse(with: "--config")
            let evaluator = try TrustOptions.configuration(config)
            let trust = ServerTrust(presentedChain: presented, peerName: trustOptions.noValidateDomain ? nil : peerName, evaluationTime: time)
            let entryName = peerName
            let evaluation = await MissingIntermediates.evaluation(for: trust, fetches: aia) {
                await evaluator.evaluation(for: $0, port: 443, entryName: entryName)
            }
            if evaluation.report != nil {
                notes.append(
                    "a pin failure report would be sent"
                        + (evaluation.reportURIs.isEmpty
                            ? " (no report URIs configured)" : " to " + evaluation.reportURIs.map { Secrets.redactedURL($0) }.joined(separator: ", ")))
            }
            try finish(evaluation.decision, notes: notes)
            return
        }
        let decision: TrustDecision
        let checked = trustOptions.noValidateDomain ? nil : peerName
        let trust = ServerTrust(presentedChain: presented, peerName: checked, evaluationTime: time)
        switch try trustOptions.policy(anchors: anchorCertificates) {
        case .securityPolicy(let policy):
            if aia {
                // The policy's own view of the domain (validatesDomainName), as without --aia.
                var named = trust
                named.peerName = peerName
                decision = await MissingIntermediates.decision(for: named, fetches: true) { await policy.evaluate($0) }
            } else {
                decision = await policy.evaluate(presented, forDomain: host ?? ip, at: time)
            }
        case .validator(let validator):
            decision = await MissingIntermediates.decision(for: trust, fetches: aia) { await validator.evaluate($0) }
        case .fetching(let evaluator):
            decision = await MissingIntermediates.decision(for: trust, fetches: aia) { await evaluator.evaluate($0) }
            await evaluator.shutdown()
        }

        try finish(decision, notes: notes)
    }

    func finish(_ decision: TrustDecision, notes: [String]) throws {
        let decision = decision.adding(notes: notes)
        if json {
            print(DecisionReport.json(decision), terminator: "")
        } else {
            print(DecisionReport.text(decision), terminator: "")
        }
        if !decision.isTrusted { throw ExitCode(TrustExitCode.notTrusted) }
    }

    func entries(_ path: String, what: String) throws -> [CertificateEntry] {
        do {
            return try CertificateSource.entries(atPath: path)
        } catch {
            throw UsageError("\(what): \(error.description)")
        }
    }

}

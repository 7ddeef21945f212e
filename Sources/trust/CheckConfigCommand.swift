import ArgumentParser
import Trust
import TrustNIO
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `trust check-config FILE`: validates a trust configuration file and summarises it per host.
struct CheckConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a trust configuration file (every problem, with its JSON path) and summarise it per host.",
        discussion: """
            Exit 0 valid (warnings may be printed), 1 invalid (each problem as PATH: message on stderr), 2 bad usage or an
            unreadable file (as in every trust command).
            Warns about pin sets expiring within 30 days and about anchor or pinned certificates whose notAfter is near.
            Report URIs' user-info is shown as *** (text and --json). The JSON document is in trust --help.
            --chain FILE --host HOST judges the configuration against a presented chain (PEM, leaf first): the \
            decision, which pin matches which certificate of the validated path, and what will break the pin set at \
            a renewal (codes single-pin, leaf-only-pin, no-ca-backup, pin-outlives-certificate). Exit 1 when the \
            configuration refuses the chain.
            """)

    @Argument(help: "The configuration file (JSON).")
    var file: String

    @Option(help: "Days ahead that count as \"near\" for expiry warnings.")
    var warnDays = 30

    @Flag(help: "Print the result as JSON on standard output (schema in trust --help): file, valid, problems, entries, warnings.")
    var json = false

    @Option(help: "A presented chain (PEM, leaf first) to judge the configuration against (with --host).")
    var chain: String?

    @Option(help: "The host the chain is presented for (with --chain).")
    var host: String?

    func validate() throws {
        if (chain == nil) != (host == nil) { throw ValidationError("--chain and --host go together") }
    }

    /// `check-config --json`.
    struct Report: Encodable {
        struct Problem: Encodable {
            var path: String
            var message: String
        }
        struct Entry: Encodable {
            /// `base`, or the entry's host pattern.
            var host: String
            /// `system`, `system+custom` or `custom-only`.
            var anchors: String
            var anchorSources: Int
            var pins: [String]
            var pinsExpire: Date?
            var pinsEnforced: Bool
            var mode: String
            var minimumTLSVersion: String
            var minimumRSABits: Int
            var minimumECBits: Int
            var exclude: [String]
            /// User-info shown as `***` (RFC 3986 §3.2.1: a password in a URL is not for display).
            var reportURIs: [String]
            var clientIdentity: Bool
            var debugOverrides: Bool
        }
        var file: String
        var valid: Bool
        var problems: [Problem]
        var entries: [Entry]
        var warnings: [String]
        /// With --chain.
        var chain: Chain?

        /// `--chain`: the decision on the chain and the pins against its validated path.
        struct Chain: Encodable {
            struct Match: Encodable {
                var pin: String
                /// The certificate of the validated path (or of the closest path, when refused) with that key; `nil`: none.
                var index: Int?
                var role: String?
                var subject: String?
            }
            struct Warning: Encodable {
                var code: String
                var message: String
            }
            var host: String
            var entry: String
            var trusted: Bool
            var reasons: [String]
            var matches: [Match]
            var warnings: [Warning]
        }
    }

    func run() async throws {
        // Unreadable input is exit 2 in every command; 1 is kept for a file that was read and is invalid.
        guard FileManager.default.isReadableFile(atPath: file) else {
            printError("\(file): cannot read: \(FileManager.default.fileExists(atPath: file) ? "permission denied" : "no such file")")
            throw ExitCode(2)
        }
        let evaluator: ConfiguredTrustEvaluator
        do {
            evaluator = try ConfiguredTrustEvaluator(contentsOf: file)
        } catch {
            // Refused before it was read (a device, too large, writable by others, a FIFO without an end): unreadable input, exit 2.
            if let refused = error.fileError {
                printError(refused.description)
                throw ExitCode(2)
            }
            if json {
                // A problem may quote a report URI as written, user-info and all: not for display (RFC 3986 §3.2.1).
                try JSONOutput.print(
                    Report(
                        file: file, valid: false, problems: error.problems.map { .init(path: $0.path, message: Secrets.redactingUserInfo(inText: $0.message)) },
                        entries: [], warnings: []))
            } else {
                for problem in error.problems { printError(Secrets.redactingUserInfo(inText: problem.description)) }
                printError("\(file): invalid (\(error.problems.count) problem\(error.problems.count == 1 ? "" : "s"))")
            }
            throw ExitCode(1)
        }
        let (entries, warnings) = summarise(evaluator)
        let judged = try await judgeChain(evaluator)
        if json {
            try JSONOutput.print(Report(file: file, valid: true, problems: [], entries: entries, warnings: warnings, chain: judged))
            if judged?.trusted == false { throw ExitCode(1) }
            return
        }
        for entry in entries { print("\(entry.host): " + Self.text(entry)) }
        for warning in warnings { printError("warning: \(warning)") }
        let hosts = entries.count - 1
        print("\(file): valid (\(hosts) host entr\(hosts == 1 ? "y" : "ies"), \(warnings.count) warning\(warnings.count == 1 ? "" : "s"))")
        if let judged {
            print(
                DisplayText("\(judged.host) (entry \(judged.entry)): \(judged.trusted ? "trusted" : "refused: " + judged.reasons.joined(separator: ", "))")
                    .description)
            for match in judged.matches {
                let what = match.index.map { "certificate \($0) (\(match.role ?? ""), \(match.subject ?? ""))" } ?? "no certificate of the path (a backup key)"
                print(DisplayText("  pin \(match.pin) matches \(what)").description)
            }
            for warning in judged.warnings { printError("warning [\(warning.code)]: \(warning.message)") }
            if !judged.trusted { throw ExitCode(1) }
        }
    }

    /// `--chain FILE --host HOST`: the configuration's decision on the chain, and its pins against the validated path.
    func judgeChain(_ evaluator: ConfiguredTrustEvaluator) async throws -> Report.Chain? {
        guard let chain, let host else { return nil }
        let certificates = try TrustOptions.load(chain, what: "--chain")
        let trust: ServerTrust
        do { trust = try ServerTrust(presentedChain: certificates, host: host) } catch { throw UsageError("--host: \(error.description)") }
        let entry = evaluator.entry(for: host)
        let evaluation = await evaluator.evaluation(for: trust, port: 443)
        let path = evaluation.decision.validatedPath.isEmpty ? evaluation.decision.closestPath : evaluation.decision.validatedPath
        let plan = PinPlan(path: path)
        let pins = entry.pins?.sha256 ?? []
        let matches = plan.matches(pins).map { match in
            Report.Chain.Match(
                pin: match.pin.description, index: match.step?.index, role: match.step?.role.rawValue, subject: match.step?.certificate.subject.description)
        }
        let warnings = pins.isEmpty ? [] : plan.warnings(pins, expires: entry.pins?.expires)
        return Report.Chain(
            host: host, entry: evaluation.matched?.description ?? "base", trusted: evaluation.decision.isTrusted,
            reasons: evaluation.decision.reasons.map(\.code), matches: matches, warnings: warnings.map { .init(code: $0.code, message: $0.message) })
    }

}

extension CheckConfigCommand {

    /// Each entry (the base first) and the warnings: pin sets and certificates near or past their end.
    func summarise(_ evaluator: ConfiguredTrustEvaluator) -> ([Report.Entry], [String]) {
        let now = Date()
        let horizon = now.addingTimeInterval(Double(warnDays) * 86_400)
        let configuration = evaluator.configuration
        var entries: [Report.Entry] = []
        var warnings: [String] = []
        for (index, entry) in ([configuration.base] + configuration.hosts).enumerated() {
            let name = index == 0 ? "base" : (entry.host?.description ?? "?")
            let expires = entry.pins?.expires
            if let expires, expires <= now {
                warnings.append("\(name): the pin set expired at \(RFC3339.string(expires)); it is not enforced")
            } else if let expires, expires <= horizon {
                warnings.append("\(name): the pin set expires in \(Int(expires.timeIntervalSince(now) / 86_400)) days (\(RFC3339.string(expires)))")
            }
            let anchors = entry.anchors.map { $0.replaceSystem ? "custom-only" : "system+custom" } ?? "system"
            entries.append(
                Report.Entry(
                    host: name, anchors: anchors, anchorSources: entry.anchors.map { $0.certificates.count + $0.pem.count } ?? 0,
                    pins: entry.pins?.sha256.map(\.description) ?? [], pinsExpire: expires, pinsEnforced: expires.map { $0 > now } ?? (entry.pins != nil),
                    mode: entry.mode.rawValue, minimumTLSVersion: "\(entry.minimumTLSVersion)", minimumRSABits: entry.minimumRSABits,
                    minimumECBits: entry.minimumECBits, exclude: entry.exclude.map(\.description), reportURIs: entry.reportURIs.map { Secrets.redactedURL($0) },
                    clientIdentity: entry.clientIdentity != nil, debugOverrides: entry.debugOverrides != nil))
            // Certificates near their end: anchors, and those whose key is pinned.
            let pinned = Set(entry.pins?.sha256 ?? [])
            let certificates = entry.anchors?.load(baseDirectory: evaluator.baseDirectory, path: "").certificates ?? []
            for certificate in certificates where certificate.notValidAfter <= horizon {
                let role = pinned.contains(certificate.spkiPin) ? "pinned certificate" : "anchor"
                warnings.append(
                    "\(name): \(role) \(DisplayText.escaped(certificate.subject.description)) \(certificate.notValidAfter <= now ? "expired" : "expires") at \(RFC3339.string(certificate.notValidAfter))"
                )
            }
        }
        // Chrome's rule: a CT log list more than 70 days old is not enforced.
        if let list = evaluator.ctLogList, let published = list.timestamp {
            let age = now.timeIntervalSince(published)
            if age > CertificateTransparencyPolicy.logListAgeLimit {
                warnings.append(
                    "ctLogList: the CT log list was published \(RFC3339.string(published)), \(Int(age / 86_400)) days ago (more than 70): Certificate Transparency is not enforced until it is updated"
                )
            } else if now.addingTimeInterval(Double(warnDays) * 86_400).timeIntervalSince(published) > CertificateTransparencyPolicy.logListAgeLimit {
                warnings.append(
                    "ctLogList: the CT log list turns 70 days old at \(RFC3339.string(published.addingTimeInterval(CertificateTransparencyPolicy.logListAgeLimit))); Certificate Transparency is not enforced after that"
                )
            }
        }
        return (entries, warnings)
    }

    /// The one-line text summary of an entry.
    static func text(_ entry: Report.Entry) -> String {
        var parts: [String] = []
        switch entry.anchors {
        case "system": parts.append("anchors: system")
        case "custom-only": parts.append("anchors: only \(entry.anchorSources) source(s)")
        default: parts.append("anchors: system + \(entry.anchorSources) source(s)")
        }
        if entry.pins.isEmpty {
            parts.append("pins: none")
        } else if let expires = entry.pinsExpire {
            let days = Int(expires.timeIntervalSinceNow / 86_400)
            parts.append("pins: \(entry.pins.count) (expire \(RFC3339.string(expires)), \(entry.pinsEnforced ? "in \(days) days" : "EXPIRED: not enforced"))")
        } else {
            parts.append("pins: \(entry.pins.count)")
        }
        parts.append(entry.mode)
        parts.append("TLS ≥ \(entry.minimumTLSVersion), RSA ≥ \(entry.minimumRSABits), EC ≥ \(entry.minimumECBits)")
        if !entry.exclude.isEmpty { parts.append("excluding " + entry.exclude.joined(separator: ", ")) }
        if !entry.reportURIs.isEmpty { parts.append("reports → " + entry.reportURIs.joined(separator: ", ")) }
        if entry.clientIdentity { parts.append("client identity") }
        if entry.debugOverrides { parts.append("debug overrides (DEBUG builds only)") }
        return parts.joined(separator: "; ")
    }
}

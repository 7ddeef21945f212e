import ArgumentParser
import Foundation
import Trust
import X509

/// `trust check-config FILE`: validates a trust configuration file and summarises it per host.
struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a trust configuration file (every problem, with its JSON path) and summarise it per host.",
        discussion: """
            Exit 0 valid (warnings may be printed), 1 invalid (each problem as PATH: message on stderr), 2 bad usage or an
            unreadable file (as in every trust command).
            Warns about pin sets expiring within 30 days and about anchor or pinned certificates whose notAfter is near.
            """)

    @Argument(help: "The configuration file (JSON).")
    var file: String

    @Option(help: "Days ahead that count as \"near\" for expiry warnings.")
    var warnDays = 30

    func run() throws {
        // Unreadable input is exit 2 in every command; 1 is kept for a file that was read and is invalid.
        guard FileManager.default.isReadableFile(atPath: file) else {
            printError("\(file): cannot read: \(FileManager.default.fileExists(atPath: file) ? "permission denied" : "no such file")")
            throw ExitCode(2)
        }
        let evaluator: ConfiguredTrustEvaluator
        do {
            evaluator = try ConfiguredTrustEvaluator(contentsOf: file)
        } catch {
            for problem in error.problems { printError(problem.description) }
            printError("\(file): invalid (\(error.problems.count) problem\(error.problems.count == 1 ? "" : "s"))")
            throw ExitCode(1)
        }
        let now = Date()
        let horizon = now.addingTimeInterval(Double(warnDays) * 86_400)
        let configuration = evaluator.configuration
        var warnings: [String] = []
        for (index, entry) in ([configuration.base] + configuration.hosts).enumerated() {
            let name = index == 0 ? "base" : (entry.host?.description ?? "?")
            var parts: [String] = []
            if let anchors = entry.anchors {
                parts.append("anchors: \(anchors.replaceSystem ? "only" : "system +") \(anchors.certificates.count + anchors.pem.count) source(s)")
            } else {
                parts.append("anchors: system")
            }
            if let pins = entry.pins {
                var text = "pins: \(pins.sha256.count)"
                if let expires = pins.expires {
                    let days = Int(expires.timeIntervalSince(now) / 86_400)
                    text += " (expire \(RFC3339.string(expires)), \(expires <= now ? "EXPIRED: not enforced" : "in \(days) days"))"
                    if expires <= now {
                        warnings.append("\(name): the pin set expired at \(RFC3339.string(expires)); it is not enforced")
                    } else if expires <= horizon {
                        warnings.append("\(name): the pin set expires in \(days) days (\(RFC3339.string(expires)))")
                    }
                }
                parts.append(text)
            } else {
                parts.append("pins: none")
            }
            parts.append(entry.mode.rawValue)
            parts.append("TLS ≥ \(entry.minimumTLSVersion), RSA ≥ \(entry.minimumRSABits), EC ≥ \(entry.minimumECBits)")
            if !entry.exclude.isEmpty { parts.append("excluding " + entry.exclude.map(\.description).joined(separator: ", ")) }
            if !entry.reportURIs.isEmpty { parts.append("reports → " + entry.reportURIs.map(\.absoluteString).joined(separator: ", ")) }
            if entry.clientIdentity != nil { parts.append("client identity") }
            if entry.debugOverrides != nil { parts.append("debug overrides (DEBUG builds only)") }
            print("\(name): " + parts.joined(separator: "; "))
            // Certificates near their end: anchors, and those whose key is pinned.
            let pinned = Set(entry.pins?.sha256 ?? [])
            let certificates = entry.anchors?.load(baseDirectory: evaluator.baseDirectory, path: "").certificates ?? []
            for certificate in certificates where certificate.notValidAfter <= horizon {
                let role = pinned.contains(certificate.spkiPin) ? "pinned certificate" : "anchor"
                warnings.append("\(name): \(role) \(certificate.subject) \(certificate.notValidAfter <= now ? "expired" : "expires") at \(RFC3339.string(certificate.notValidAfter))")
            }
        }
        for warning in warnings { printError("warning: \(warning)") }
        print("\(file): valid (\(configuration.hosts.count) host entr\(configuration.hosts.count == 1 ? "y" : "ies"), \(warnings.count) warning\(warnings.count == 1 ? "" : "s"))")
    }
}

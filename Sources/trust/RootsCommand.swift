import ArgumentParser
import SwiftASN1
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `trust roots`: the public root store in use, where it comes from, and how the machine's CA bundle differs from
/// Mozilla's store.
struct RootsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roots",
        abstract: "Show the public root store in use (--roots), its source and date, and how the system bundle differs from Mozilla's.",
        discussion: """
            Roots are compared as certificates are chained: by subject and public key, so a root re-issued with the \
            same key and name is one root. --system-diff lists the bundle's roots Mozilla does not trust for servers \
            (refused whatever --roots says), the bundle's roots Mozilla does not list (kept: an administrator's own CA \
            and a root Mozilla removed look alike), the roots Mozilla trusts that the bundle lacks, and the roots with \
            a server distrust-after date. Exit 0, or 2 on bad usage.
            """)

    @Option(name: .long, help: "The store to describe: system+mozilla (the default), system or mozilla.")
    var roots: String?

    @Flag(name: .long, help: "Compare the system bundle with Mozilla's store, root by root.")
    var systemDiff = false

    @Flag(help: "Print the result as JSON on standard output (schema in trust --help).")
    var json = false

    /// `roots --json`.
    struct Report: Encodable {
        struct Root: Encodable {
            var subject: String
            /// Mozilla's label, when Mozilla lists the root.
            var label: String?
            var pin: String
            /// Mozilla's server distrust-after date, when it sets one.
            var serverDistrustAfter: Date?
        }
        struct Mozilla: Encodable {
            var source: String
            var trustedForServers: Int
            var listed: Int
            var serverDistrustAfter: [Root]
        }
        struct System: Encodable {
            var bundle: String?
            var roots: Int
        }
        struct Difference: Encodable {
            var inBoth: Int
            var notTrustedByMozilla: [Root]
            var notListedByMozilla: [Root]
            var missingFromSystem: [Root]
        }
        var store: String
        var mozilla: Mozilla?
        var system: System?
        var systemDiff: Difference?
    }

    /// A root's identity for chaining: its subject's DER and its key.
    private struct Identity: Hashable {
        var subject: [UInt8]
        var pin: SPKIPin

        init(_ certificate: Certificate) {
            var serializer = DER.Serializer()
            try? serializer.serialize(certificate.subject)
            subject = serializer.serializedBytes
            pin = certificate.spkiPin
        }
    }

    func run() throws {
        let store = try TrustOptions.rootStore(named: roots)
        let mozilla = MozillaRootStore.shared
        func root(_ certificate: Certificate, _ entry: MozillaRootEntry?) -> Report.Root {
            Report.Root(
                subject: certificate.subject.description, label: entry?.label, pin: certificate.spkiPin.description,
                serverDistrustAfter: entry?.serverDistrustAfter)
        }
        var report = Report(store: store.name)
        if store.includesMozilla || systemDiff {
            let dated = mozilla.entries.filter { $0.serverDistrustAfter != nil }.compactMap { entry in entry.certificate.map { root($0, entry) } }
            report.mozilla = Report.Mozilla(
                source: MozillaRoots.embeddedSource, trustedForServers: MozillaRoots.count, listed: mozilla.entries.count, serverDistrustAfter: dated)
        }
        if store.includesSystem || systemDiff {
            report.system = Report.System(bundle: SystemRoots.bundlePath, roots: SystemRoots.certificates.count)
        }
        if systemDiff {
            var listed: [Identity: (Certificate, MozillaRootEntry)] = [:]
            for entry in mozilla.entries {
                guard let certificate = entry.certificate else { continue }
                let identity = Identity(certificate)
                // A key and name NSS lists twice: the trusted entry speaks for it (as a path would find it).
                if let known = listed[identity], known.1.serverTrust == .trusted { continue }
                listed[identity] = (certificate, entry)
            }
            var difference = Report.Difference(inBoth: 0, notTrustedByMozilla: [], notListedByMozilla: [], missingFromSystem: [])
            var inSystem = Set<Identity>()
            for certificate in SystemRoots.certificates {
                let identity = Identity(certificate)
                guard inSystem.insert(identity).inserted else { continue }
                if let (_, entry) = listed[identity] {
                    if entry.serverTrust == .trusted { difference.inBoth += 1 } else { difference.notTrustedByMozilla.append(root(certificate, entry)) }
                } else {
                    difference.notListedByMozilla.append(root(certificate, nil))
                }
            }
            for (identity, (certificate, entry)) in listed where entry.serverTrust == .trusted && !inSystem.contains(identity) {
                difference.missingFromSystem.append(root(certificate, entry))
            }
            difference.missingFromSystem.sort { ($0.label ?? "") < ($1.label ?? "") }
            report.systemDiff = difference
        }
        if json {
            try JSONOutput.print(report)
            return
        }
        print(text(report))
    }

    private func text(_ report: Report) -> String {
        var lines = [DisplayText("Root store: \(report.store)\(roots == nil ? " (the default)" : "")").description]
        if let mozilla = report.mozilla {
            lines.append(DisplayText("  Mozilla's store, built in: \(mozilla.source)").description)
            lines.append("    \(mozilla.trustedForServers) roots trusted for TLS servers (\(mozilla.listed) certificates listed)")
            for root in mozilla.serverDistrustAfter {
                lines.append(
                    DisplayText(
                        "    distrusted for certificates issued after \(root.serverDistrustAfter.map(RFC3339.string) ?? ""): \(root.label ?? root.subject)"
                    ).description)
            }
        }
        if let system = report.system {
            lines.append(DisplayText("  System bundle: \(system.bundle ?? "none found (see SSL_CERT_FILE)"), \(system.roots) roots").description)
        }
        if let difference = report.systemDiff {
            lines.append("System bundle against Mozilla's store (by subject and public key):")
            lines.append("  \(difference.inBoth) roots in both")
            func section(_ title: String, _ roots: [Report.Root]) {
                lines.append("  \(roots.count) \(title)")
                for root in roots { lines.append(DisplayText("    \(root.label ?? root.subject)").description) }
            }
            section("in the bundle that Mozilla lists without server trust (refused as anchors):", difference.notTrustedByMozilla)
            section("in the bundle that Mozilla does not list (kept; with --roots mozilla, not trusted):", difference.notListedByMozilla)
            section("trusted by Mozilla and missing from the bundle (trusted with system+mozilla or mozilla):", difference.missingFromSystem)
        }
        return lines.joined(separator: "\n")
    }
}

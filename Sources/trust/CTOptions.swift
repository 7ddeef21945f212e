import ArgumentParser
import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Certificate Transparency options shared by `evaluate`, `get` and `inspect`.
struct CTOptions: ParsableArguments {
    @Option(name: .long, help: "A CT log list in Chrome's log_list.json (v3) schema: the logs whose SCTs count. Alone, it means --ct enforce.")
    var ctLogList: String?

    @Option(
        name: .long,
        help:
            "Certificate Transparency: off, report-only (a leaf without enough valid SCTs is allowed, with a note) or enforce (refused). Asked for here, it applies to every chain, custom anchors included. Needs --ct-log-list."
    )
    var ct: String?

    func validate() throws {
        if let ct, CertificateTransparencyPolicy.Mode(rawValue: ct) == nil {
            throw ValidationError("--ct must be off, report-only or enforce")
        }
        if let ct, ct != "off", ctLogList == nil {
            throw ValidationError("--ct \(ct) needs --ct-log-list FILE (the logs whose SCTs count)")
        }
    }

    /// Whether any CT option was given.
    var isUsed: Bool { ctLogList != nil || ct != nil }

    /// The policy the options ask for: off without them; the list's mode (enforce by default) applied to every chain.
    /// An unreadable or malformed list is a usage error; a list older than 70 days is loaded with a warning (the
    /// decision then says CT was not enforced).
    func policy() throws -> CertificateTransparencyPolicy {
        guard let path = ctLogList else { return .off }
        let mode = ct.flatMap(CertificateTransparencyPolicy.Mode.init(rawValue:)) ?? .enforce
        guard mode != .off else { return .off }
        let list: CTLogList
        do {
            list = try CTLogList.load(path: path)
        } catch {
            throw UsageError("--ct-log-list \(error.detail)")
        }
        if let published = list.timestamp, Date().timeIntervalSince(published) > CertificateTransparencyPolicy.logListAgeLimit {
            printError(
                "warning: --ct-log-list \(path) was published \(RFC3339.string(published)), more than 70 days ago: Certificate Transparency is not enforced (use a current list)"
            )
        }
        return CertificateTransparencyPolicy(mode: mode, logList: list, appliesToCustomAnchors: true)
    }

    /// CT options are not silently dropped where another source decides trust (a configuration file).
    func refuse(with other: String) throws {
        if isUsed { throw UsageError("--ct and --ct-log-list do not combine with \(other)") }
    }
}

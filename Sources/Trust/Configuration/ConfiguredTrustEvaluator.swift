import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Evaluates server trust with a ``TrustConfiguration``: the entry that matches the host decides
/// the anchors, minimums and pins. Pins are checked on the validated path (a policy inside the path
/// search), never on what the peer appended.
///
/// - An expired pin set is not enforced: the decision carries a warning note and a report.
/// - `report-only`: the connection is judged without the pins; a pin failure yields a report.
/// - Debug overrides (extra anchors for a proxy CA) exist only in DEBUG builds; in release builds
///   they are ignored entirely (the code that honours them is not compiled).
public struct ConfiguredTrustEvaluator: TrustEvaluator {
    /// The configuration this evaluator applies.
    public let configuration: TrustConfiguration
    /// Where relative paths in the configuration are read from.
    public let baseDirectory: String
    /// The CT log list the configuration names (`ctLogList`), loaded once.
    public let ctLogList: CTLogList?

    /// An evaluation with what a caller may need besides the decision.
    public struct Evaluation: Sendable {
        /// Whether the server is trusted, and why.
        public var decision: TrustDecision
        /// The entry's host pattern (nil: the base entry).
        public var matched: HostPattern?
        /// Things worth saying although the connection went on (expired pins, report-only failures, debug overrides).
        public var warnings: [String]
        /// A report to send to the entry's report URIs, if something should be reported.
        public var report: PinFailureReport?
        /// Where to send it.
        public var reportURIs: [URL]
    }

    /// An entry with its anchors read and its validators built (once, not per connection).
    struct ResolvedEntry: Sendable {
        var entry: TrustConfiguration.Entry
        var label: String
        /// With the entry's pins as a rule of the path search (the same as `unpinned` without pins).
        var pinned: PathValidator
        var unpinned: PathValidator
        /// DEBUG builds only: validators over the debug override anchors.
        var debugPinned: PathValidator?
        var debugUnpinned: PathValidator?
    }

    private let resolvedBase: ResolvedEntry
    private let resolvedHosts: [ResolvedEntry]

    /// Reads, validates and prepares the configuration file at `path`; relative anchor paths are
    /// read from the file's folder. `publicSuffixes` is as
    /// ``TrustConfiguration/parse(_:publicSuffixes:)`` takes it.
    public init(
        contentsOf path: String, publicSuffixes: PublicSuffixList? = PublicSuffixList.shared
    ) throws(TrustConfigurationFileError) {
        let folder = path.parentPath
        try self.init(
            configuration: try TrustConfiguration.load(contentsOf: path, publicSuffixes: publicSuffixes),
            baseDirectory: folder.isEmpty ? "." : folder)
    }

    /// Prepares every entry of `configuration` once: its anchors read, its validators built.
    /// - Parameters:
    ///   - configuration: the validated configuration.
    ///   - baseDirectory: where relative anchor paths are read from (the configuration file's folder).
    public init(configuration: TrustConfiguration, baseDirectory: String = FileManager.default.currentDirectoryPath) throws(TrustConfigurationFileError) {
        self.configuration = configuration
        self.baseDirectory = baseDirectory
        var problems: [TrustConfigurationProblem] = []
        var ctLogList: CTLogList?
        if let file = configuration.ctLogList {
            do {
                ctLogList = try CTLogList.load(path: file.hasPrefix("/") ? file : baseDirectory.joiningPath(file))
            } catch {
                problems.append(TrustConfigurationProblem(path: "$.ctLogList", message: "\(error)"))
            }
        }
        self.ctLogList = ctLogList
        func resolve(_ entry: TrustConfiguration.Entry, _ path: String) -> ResolvedEntry {
            func anchors(_ anchors: TrustConfiguration.Anchors?, _ path: String) -> TrustAnchors {
                guard let anchors else { return .system }
                let loaded = anchors.load(baseDirectory: baseDirectory, path: path)
                problems += loaded.problems
                return anchors.replaceSystem ? .only(loaded.certificates) : .system(adding: loaded.certificates)
            }
            let label = "configuration " + (entry.host.map { "\"\($0)\"" } ?? "base")
            var unpinnedPolicy = ValidationPolicy.webPKI
            unpinnedPolicy.minimumRSAKeyBits = entry.minimumRSABits
            unpinnedPolicy.minimumECKeyBits = entry.minimumECBits
            unpinnedPolicy.allowsSHA1Signatures = false
            if let revocation = entry.revocation {
                let loaded = revocation.load(baseDirectory: baseDirectory, path: path + ".revocation")
                problems += loaded.problems
                unpinnedPolicy.revocation = loaded.policy
            }
            if let ct = entry.certificateTransparency, ct.mode != .off {
                unpinnedPolicy.certificateTransparency = CertificateTransparencyPolicy(
                    mode: ct.mode, logList: ctLogList, appliesToCustomAnchors: ct.customAnchors)
            }
            var pinnedPolicy = unpinnedPolicy
            pinnedPolicy.pins = Set(entry.pins?.sha256 ?? [])
            let trustAnchors = anchors(entry.anchors, path + ".anchors")
            var resolved = ResolvedEntry(
                entry: entry, label: label,
                pinned: PathValidator(anchors: trustAnchors, policy: pinnedPolicy, name: .configurationEntry(host: entry.host, debugOverride: false)),
                unpinned: PathValidator(anchors: trustAnchors, policy: unpinnedPolicy, name: .configurationEntry(host: entry.host, debugOverride: false)))
            #if DEBUG
                if let overrides = entry.debugOverrides {
                    let debugAnchors = anchors(overrides.anchors, path + ".debugOverrides.anchors")
                    let debugLabel = TrustDecision.Policy.configurationEntry(host: entry.host, debugOverride: true)
                    resolved.debugUnpinned = PathValidator(anchors: debugAnchors, policy: unpinnedPolicy, name: debugLabel)
                    resolved.debugPinned =
                        overrides.overridesPins ? resolved.debugUnpinned : PathValidator(anchors: debugAnchors, policy: pinnedPolicy, name: debugLabel)
                }
            #endif
            return resolved
        }
        resolvedBase = resolve(configuration.base, "$.base")
        resolvedHosts = configuration.hosts.enumerated().map { resolve($0.element, "$.hosts[\($0.offset)]") }
        // A configuration built in code or decoded directly has not been through the loader: the
        // rules that keep pinning from failing open are checked again here.
        for (index, entry) in ([configuration.base] + configuration.hosts).enumerated() {
            let path = index == 0 ? "$.base" : "$.hosts[\(index - 1)]"
            guard let pins = entry.pins else { continue }
            if pins.sha256.isEmpty {
                problems.append(
                    TrustConfigurationProblem(path: path + ".pins.sha256", message: "is empty: pinning asked for with no pins would accept anything"))
            } else if pins.sha256.count == 1 && !pins.allowSinglePin && entry.mode == .enforce {
                problems.append(
                    TrustConfigurationProblem(path: path + ".pins.sha256", message: "an enforced pin set needs a backup pin (at least two), or allowSinglePin"))
            }
        }
        if !problems.isEmpty { throw TrustConfigurationFileError(problems: problems) }
    }

    /// Evaluates `trust` with the entry for its host, as if on port 443, and returns only the decision.
    public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        await evaluation(for: trust, port: 443).decision
    }

    /// The configuration entry for `host` (exact > most specific pattern > base, exclusions respected).
    public func entry(for host: String) -> TrustConfiguration.Entry {
        resolved(for: try? PeerName(host: host)).entry
    }

    /// The prepared entry for the host (see ``TrustConfiguration/hostIndex(for:)``).
    func resolved(for name: PeerName?) -> ResolvedEntry {
        guard let name, let index = configuration.hostIndex(for: name) else { return resolvedBase }
        return resolvedHosts[index]
    }

    /// The decision for `trust` under the entry its name matches, with the pin-failure report due, if any.
    /// - Parameters:
    ///   - trust: the chain, the peer name and the time.
    ///   - port: the connection's port (pin-failure reports name it).
    ///   - entryName: the name that chooses the entry when `trust` has none (the name check
    ///     switched off): the entry still applies, only the name is not checked.
    public func evaluation(for trust: ServerTrust, port: Int, entryName: PeerName? = nil) async -> Evaluation {
        let resolved = resolved(for: trust.peerName ?? entryName)
        let entry = resolved.entry
        let label = resolved.label
        var warnings: [String] = []
        var report: PinFailureReport?
        let pins = entry.pins
        let pinsExpired = pins?.isExpired(at: trust.evaluationTime) ?? false
        let enforcesPins = pins != nil && !pinsExpired && entry.mode == .enforce

        if let pins, pins.sha256.isEmpty, entry.mode == .enforce {
            // Never read as "no pinning".
            let decision = TrustDecision.refused(
                [.refusedByApplication("the pin set of \(label) is empty: nothing can match")], trust: trust, policy: resolved.unpinned.name)
            return Evaluation(decision: decision, matched: entry.host, warnings: [], report: nil, reportURIs: entry.reportURIs)
        }
        var decision = await (enforcesPins ? resolved.pinned : resolved.unpinned).evaluate(trust)
        if let pins, !pins.sha256.isEmpty, !enforcesPins {
            // Not enforced (expired, or report-only): would the pins have held? A second search only
            // when it could tell: not when the path that validated already holds a pinned key (they
            // held), nor when no path validated at all (a stricter policy cannot succeed either).
            let pinSet = Set(pins.sha256)
            let heldOnPath = decision.isTrusted && decision.validatedPath.contains { pinSet.contains($0.spkiPin) }
            let withPins = heldOnPath || !decision.isTrusted ? decision : await resolved.pinned.evaluate(trust)
            if pinsExpired {
                warnings.append("the pin set of \(label) expired at \(pins.expires.map(RFC3339.string) ?? "?"): pins not enforced")
            }
            if !withPins.isTrusted || pinsExpired {
                if entry.mode == .reportOnly && !withPins.isTrusted {
                    warnings.append("report-only: the pins of \(label) did not match; the connection goes on")
                    // What report-only let through, typed for observers and metrics (as soft revocation and
                    // report-only CT do): the pinned evaluation's pin mismatch.
                    if decision.isTrusted { decision = decision.allowing([Self.pinMismatch(withPins, expected: pinSet, seen: decision.pinsSeen)]) }
                }
                report = PinFailureReport(decision: withPins, trust: trust, port: port, entry: entry, pinsExpired: pinsExpired)
            }
        } else if enforcesPins && !decision.isTrusted {
            report = PinFailureReport(decision: decision, trust: trust, port: port, entry: entry, pinsExpired: false)
        }
        // Revocation and CT are reported too: a refusal for either, or what soft checking or report-only CT let through.
        let reported: Set<String> = ["revoked", "revocation-status-unknown", "ct-policy-not-met"]
        if report == nil, (decision.reasons + decision.allowedFailures).contains(where: { reported.contains($0.code) }) {
            report = PinFailureReport(decision: decision, trust: trust, port: port, entry: entry, pinsExpired: false)
        }
        #if DEBUG
            if !decision.isTrusted, let debug = enforcesPins ? resolved.debugPinned : resolved.debugUnpinned {
                let viaOverride = await debug.evaluate(trust)
                if viaOverride.isTrusted {
                    decision = viaOverride.overriding(decision, by: .debugOverride).adding(notes: [
                        "DEBUG build: accepted through the entry's debug override anchors"
                    ])
                    report = nil  // a proxy CA in a debug build: not a pin failure to report
                    warnings.append("DEBUG build: \(trust.peerName?.description ?? "?") accepted through a debug override anchor")
                }
            }
        #endif
        return Evaluation(decision: decision.adding(notes: warnings), matched: entry.host, warnings: warnings, report: report, reportURIs: entry.reportURIs)
    }

    /// The pin mismatch of a pinned evaluation that refused (its own reason, else one made of the pins
    /// `seen` on the path that validated without them and those `expected`).
    private static func pinMismatch(_ pinned: TrustDecision, expected: Set<SPKIPin>, seen: [SPKIPin]) -> TrustFailureReason {
        for reason in pinned.reasons {
            if case .pinMismatch = reason.detail { return reason }
        }
        return .pinMismatch(seen: seen, expected: expected.sorted { $0.base64 < $1.base64 })
    }
}

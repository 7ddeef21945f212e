import Foundation
import X509

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

    struct ResolvedEntry: Sendable {
        var entry: TrustConfiguration.Entry
        var anchors: TrustAnchors
        var debugAnchors: TrustAnchors?
    }

    private let resolvedBase: ResolvedEntry
    private let resolvedHosts: [ResolvedEntry]

    /// - Parameter baseDirectory: where relative anchor paths are read from (the configuration file's folder).
    public init(configuration: TrustConfiguration, baseDirectory: String = FileManager.default.currentDirectoryPath) throws(TrustConfigurationFileError) {
        self.configuration = configuration
        self.baseDirectory = baseDirectory
        var problems: [TrustConfigurationProblem] = []
        func resolve(_ entry: TrustConfiguration.Entry, _ path: String) -> ResolvedEntry {
            func anchors(_ anchors: TrustConfiguration.Anchors?, _ path: String) -> TrustAnchors {
                guard let anchors else { return .system }
                var certificates: [Certificate] = []
                for (index, file) in anchors.certificates.enumerated() {
                    let full = file.hasPrefix("/") ? file : (baseDirectory as NSString).appendingPathComponent(file)
                    do {
                        var isFolder: ObjCBool = false
                        let exists = FileManager.default.fileExists(atPath: full, isDirectory: &isFolder)
                        let loaded = exists && isFolder.boolValue ? try CertificateSource.certificates(inDirectory: full) : try CertificateSource.certificates(atPath: full)
                        if loaded.isEmpty { problems.append(TrustConfigurationProblem(path: "\(path).certificates[\(index)]", message: "\(full) holds no certificate")) }
                        certificates += loaded
                    } catch {
                        problems.append(TrustConfigurationProblem(path: "\(path).certificates[\(index)]", message: "\(error)"))
                    }
                }
                for (index, pem) in anchors.pem.enumerated() {
                    do {
                        certificates += try CertificateSource.certificates(pem: pem, source: "\(path).pem[\(index)]")
                    } catch {
                        problems.append(TrustConfigurationProblem(path: "\(path).pem[\(index)]", message: "\(error)"))
                    }
                }
                return anchors.replaceSystem ? .only(certificates) : .system(adding: certificates)
            }
            var debugAnchors: TrustAnchors?
            #if DEBUG
            if let overrides = entry.debugOverrides { debugAnchors = anchors(overrides.anchors, path + ".debugOverrides.anchors") }
            #endif
            return ResolvedEntry(entry: entry, anchors: anchors(entry.anchors, path + ".anchors"), debugAnchors: debugAnchors)
        }
        resolvedBase = resolve(configuration.base, "$.base")
        resolvedHosts = configuration.hosts.enumerated().map { resolve($0.element, "$.hosts[\($0.offset)]") }
        // A configuration built in code or decoded directly has not been through the loader: the
        // rules that keep pinning from failing open are checked again here.
        for (index, entry) in ([configuration.base] + configuration.hosts).enumerated() {
            let path = index == 0 ? "$.base" : "$.hosts[\(index - 1)]"
            guard let pins = entry.pins else { continue }
            if pins.sha256.isEmpty {
                problems.append(TrustConfigurationProblem(path: path + ".pins.sha256", message: "is empty: pinning asked for with no pins would accept anything"))
            } else if pins.sha256.count == 1 && !pins.allowSinglePin && entry.mode == .enforce {
                problems.append(TrustConfigurationProblem(path: path + ".pins.sha256", message: "an enforced pin set needs a backup pin (at least two), or allowSinglePin"))
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

    /// The entry for the host; exact > most specific pattern > base; exclusions respected.
    func resolved(for name: PeerName?) -> ResolvedEntry {
        guard let name else { return resolvedBase }
        let candidates = resolvedHosts.filter { resolved in
            guard let pattern = resolved.entry.host, pattern.matches(name) else { return false }
            return !resolved.entry.exclude.contains { $0.matches(name) }
        }
        return candidates.max { ($0.entry.host?.specificity ?? 0) < ($1.entry.host?.specificity ?? 0) } ?? resolvedBase
    }

    /// - Parameter entryName: the name that chooses the entry when `trust` has none (the name check
    ///   switched off): the entry still applies, only the name is not checked.
    public func evaluation(for trust: ServerTrust, port: Int, entryName: PeerName? = nil) async -> Evaluation {
        let resolved = resolved(for: trust.peerName ?? entryName)
        let entry = resolved.entry
        let label = "configuration " + (entry.host.map { "\"\($0)\"" } ?? "base")
        var policy = ValidationPolicy.webPKI
        policy.minimumRSAKeyBits = entry.minimumRSABits
        policy.minimumECKeyBits = entry.minimumECBits
        policy.allowsSHA1Signatures = false
        var warnings: [String] = []
        var report: PinFailureReport?
        let pins = entry.pins
        let pinsExpired = pins?.isExpired(at: trust.evaluationTime) ?? false
        let enforcesPins = pins != nil && !pinsExpired && entry.mode == .enforce
        if enforcesPins, let pins { policy.pins = Set(pins.sha256) }

        if let pins, pins.sha256.isEmpty, entry.mode == .enforce {
            // Never read as "no pinning".
            let decision = TrustDecision.refused([.refusedByApplication("the pin set of \(label) is empty: nothing can match")], trust: trust, policy: label)
            return Evaluation(decision: decision, matched: entry.host, warnings: [], report: nil, reportURIs: entry.reportURIs)
        }
        var decision = await PathValidator(anchors: resolved.anchors, policy: policy, name: label).evaluate(trust)
        if let pins, !pins.sha256.isEmpty, !enforcesPins {
            // Not enforced (expired, or report-only): would the pins have held on the validated path?
            var pinned = policy
            pinned.pins = Set(pins.sha256)
            let withPins = await PathValidator(anchors: resolved.anchors, policy: pinned, name: label).evaluate(trust)
            if pinsExpired {
                warnings.append("the pin set of \(label) expired at \(pins.expires.map(RFC3339.string) ?? "?"): pins not enforced")
            }
            if !withPins.isTrusted || pinsExpired {
                if entry.mode == .reportOnly && !withPins.isTrusted { warnings.append("report-only: the pins of \(label) did not match; the connection goes on") }
                report = PinFailureReport(decision: withPins, trust: trust, port: port, entry: entry, pinsExpired: pinsExpired)
            }
        } else if enforcesPins && !decision.isTrusted {
            report = PinFailureReport(decision: decision, trust: trust, port: port, entry: entry, pinsExpired: false)
        }
        #if DEBUG
        if !decision.isTrusted, let debugAnchors = resolved.debugAnchors, let overrides = entry.debugOverrides {
            var debugPolicy = policy
            if overrides.overridesPins { debugPolicy.pins = [] }
            let viaOverride = await PathValidator(anchors: debugAnchors, policy: debugPolicy, name: label + " (debug override)").evaluate(trust)
            if viaOverride.isTrusted {
                decision = viaOverride
                report = nil  // a proxy CA in a debug build: not a pin failure to report
                decision.notes.append("DEBUG build: accepted through the entry's debug override anchors")
                warnings.append("DEBUG build: \(trust.peerName?.description ?? "?") accepted through a debug override anchor")
            }
        }
        #endif
        decision.notes += warnings
        return Evaluation(decision: decision, matched: entry.host, warnings: warnings, report: report, reportURIs: entry.reportURIs)
    }
}

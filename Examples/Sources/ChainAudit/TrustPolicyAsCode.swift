// A platform team's trust policy kept as code: each service's settings (a Codable struct in the team's own config
// repository) become a TrustConfiguration, written as the JSON file that `trust check-config` reads and that the
// services load — pins with expiry, revocation from a CRL file, Certificate Transparency enforced with a log list,
// a debug proxy's CA for development builds.
import Foundation
import Trust

/// One service's trust settings, as the platform team's repository stores them.
public struct ServiceTrustSettings: Codable, Sendable, Equatable {
    /// The hosts the service calls (`api.example.com`, `*.cdn.example.net`, `**.example.org`).
    public var hosts: [HostPattern]
    /// Its pins (`sha256/…`), with a backup, and when they stop being enforced.
    public var pins: [String]
    public var pinsExpire: Date?
    /// CRL files (relative to the configuration file), checked hard for the whole path: one per CA on it.
    public var crls: [String]
    /// The CT log list file (Chrome's v3 schema), relative to the configuration file; nil: CT not enforced.
    public var ctLogList: String?
    /// The private anchors the hosts chain to (PEM).
    public var anchorsPEM: [String]
    /// A debugging proxy's CA, accepted in DEBUG builds only (never in release).
    public var debugProxyCA: String?
    /// The client certificate the service presents to these hosts: a PKCS#12 file and the environment variable
    /// holding its passphrase.
    public var clientPKCS12: String?
    public var clientPassphraseVariable: String?

    public init(
        hosts: [HostPattern], pins: [String] = [], pinsExpire: Date? = nil, crls: [String] = [], ctLogList: String? = nil, anchorsPEM: [String],
        debugProxyCA: String? = nil
    ) {
        (self.hosts, self.pins, self.pinsExpire, self.crls, self.ctLogList) = (hosts, pins, pinsExpire, crls, ctLogList)
        (self.anchorsPEM, self.debugProxyCA) = (anchorsPEM, debugProxyCA)
    }
}

/// Settings to configuration, and the checks a reviewer wants before merging.
public enum TrustPolicyAsCode {
    /// The configuration for `settings`: one entry per host pattern, the same rules in each.
    public static func configuration(_ settings: ServiceTrustSettings) throws -> TrustConfiguration {
        var configuration = TrustConfiguration()
        configuration.ctLogList = settings.ctLogList
        configuration.evaluationCache = EvaluationCacheSettings(capacity: 512, timeToLive: .seconds(300))
        let pins = try settings.pins.map { try SPKIPin(parsing: $0) }
        configuration.hosts = settings.hosts.map { pattern in
            var entry = TrustConfiguration.Entry(host: pattern)
            entry.anchors = TrustConfiguration.Anchors(pem: settings.anchorsPEM, replaceSystem: true)
            if !pins.isEmpty { entry.pins = TrustConfiguration.Pins(sha256: pins, expires: settings.pinsExpire, allowSinglePin: false) }
            if !settings.crls.isEmpty {
                entry.revocation = TrustConfiguration.Revocation(mode: .hard, depth: .chain, crls: settings.crls, exemptShortLived: true)
            }
            if settings.ctLogList != nil { entry.certificateTransparency = TrustConfiguration.CertificateTransparency(mode: .enforce, customAnchors: true) }
            if let ca = settings.debugProxyCA {
                entry.debugOverrides = TrustConfiguration.DebugOverrides(anchors: TrustConfiguration.Anchors(pem: [ca]), overridesPins: true)
            }
            if let pkcs12 = settings.clientPKCS12 {
                entry.clientIdentity = TrustConfiguration.ClientIdentityReference(
                    pkcs12: pkcs12, passphraseEnvironment: settings.clientPassphraseVariable, certificate: nil, key: nil)
            }
            entry.allowSHA1 = false
            entry.allowLockout = false
            return entry
        }
        return configuration
    }

    /// What a reviewer is told about a configuration at `time`: pins about to expire, single pins, lock-out
    /// allowances, debug overrides, and which entry each sample host falls under.
    public static func review(_ configuration: TrustConfiguration, samples: [String], at time: Date) -> [String] {
        var notes: [String] = []
        for entry in configuration.hosts {
            let name = entry.host?.description ?? "base"
            if let pins = entry.pins {
                if pins.isExpired(at: time + 30 * 86_400) { notes.append("\(name): pins expire within 30 days") }
                if pins.allowSinglePin || pins.sha256.count < 2 { notes.append("\(name): no backup pin") }
            }
            if entry.allowLockout { notes.append("\(name): may lock out its hosts") }
            if entry.allowSHA1 { notes.append("\(name): allows SHA-1") }
            if let debug = entry.debugOverrides {
                notes.append(
                    "\(name): debug builds also trust \(debug.anchors.pem.count + debug.anchors.certificates.count) proxy CA(s)\(debug.overridesPins ? ", over the pins" : "")"
                )
            }
            if let revocation = entry.revocation {
                notes.append(
                    "\(name): revocation \(revocation.mode.rawValue) (\(revocation.depth.rawValue)) from \(revocation.crls.joined(separator: ", "))\(revocation.exemptShortLived ? ", short-lived exempt" : "")"
                )
            }
            if let ct = entry.certificateTransparency { notes.append("\(name): CT \(ct.mode.rawValue)\(ct.customAnchors ? " (custom anchors too)" : "")") }
        }
        for sample in samples {
            guard let name = try? PeerName(host: sample) else {
                notes.append("\(sample): not a host name")
                continue
            }
            let entry = configuration.hosts.first { $0.host?.matches(name) == true }
            notes.append("\(sample) -> \(entry?.host?.description ?? "base entry")")
        }
        if let list = configuration.ctLogList { notes.append("CT log list: \(list)") }
        return notes
    }

    /// The configuration as the file the services load, checked as they will check it (a pattern on a public
    /// suffix, `**.co.uk`, is refused with the Public Suffix List compiled into the library).
    public static func file(_ configuration: TrustConfiguration) throws -> String {
        let text = configuration.jsonText()
        _ = try TrustConfiguration.parse(text, publicSuffixes: PublicSuffixList.shared)
        return text
    }

    /// The CT policy a service enforcing `logList` applies, in one line.
    public static func describe(_ policy: CertificateTransparencyPolicy) -> String {
        "CT \(policy.mode.rawValue): a log list \(policy.logList?.timestamp == nil ? "without a date" : "dated"), used up to \(Int(policy.maximumLogListAge / 86_400)) days old, "
            + "\(policy.minimumOperators) operators"
    }
}

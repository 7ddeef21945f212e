import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Per-host trust configuration in one portable, versioned JSON file: a base entry plus host entries.
///
/// ```json
/// {
///   "version": 1,
///   "base": { "minimumRSABits": 2048 },
///   "hosts": [
///     { "host": "**.example.com", "exclude": ["legacy.example.com"],
///       "pins": { "sha256": ["sha256/…", "sha256/…"], "expires": "2027-06-01T00:00:00Z" },
///       "mode": "enforce", "reportURIs": ["https://reports.example.net/pins"] }
///   ]
/// }
/// ```
///
/// Host patterns: `example.com` (that host), `*.example.com` (exactly one more label),
/// `**.example.com` (the apex *and* any depth). An exact host beats any pattern; among patterns the
/// most specific wins (more labels; `*.` before `**.`). Hosts listed in an entry's `exclude` fall
/// through to the next match, and finally to `base`.
///
/// Entry members (all optional except `host`; unknown members are errors):
/// - `anchors`: `{"certificates": [PATH…], "pem": [PEM…], "replaceSystem": false}` — added to the
///   system roots, or replacing them.
/// - `pins`: `{"sha256": [PIN…], "expires": RFC3339, "allowSinglePin": false}` — checked on the
///   validated path; at least two pins (a backup) unless `allowSinglePin`; past `expires` not enforced
///   (a warning and a report instead).
/// - `mode`: `"enforce"` (default) or `"report-only"`.
/// - `minimumRSABits` (≥ 2048), `minimumECBits` (≥ 256), `allowSHA1`: false.
/// - `reportURIs`: `https` URIs for failure reports (none by default).
/// - `debugOverrides`: `{"anchors": {…}, "overridesPins": false}` — honoured only in DEBUG builds.
/// - `revocation`: `{"mode": "off"|"soft"|"hard", "depth": "leaf"|"chain", "crls": [PATH…], "exemptShortLived": true}`
///   (see ``RevocationPolicy``; CRLs are read from the given files).
/// - `certificateTransparency`: `{"mode": "off"|"report-only"|"enforce", "customAnchors": false}` (see
///   ``CertificateTransparencyPolicy``; needs the top-level `ctLogList`; `customAnchors: true` checks paths to this
///   entry's custom anchors too).
/// - `allowLockout`: `true` lets a ``ReloadingTrustConfiguration`` put in force pins that match no key a host
///   presented in its last trusted connection (see ``Entry/allowLockout``); `false` by default.
///
/// - `minimumTLSVersion`: `"1.2"` (default) or `"1.3"` (see ``TLSMinimum``).
/// - `clientIdentity`: `{"pkcs12": PATH, "passphraseEnvironment": NAME}` or `{"certificate": PATH, "key": PATH}` (see
///   ``ClientIdentityReference``).
///
/// The last two act on the connection rather than on trust: the engine reads and keeps them, and the module that makes
/// the connection (TrustNIO, and a `TrustHTTPClient`) applies them.
///
/// Top-level `evaluationCache`: `false`, or `{"capacity": N, "timeToLiveSeconds": S}` (see ``evaluationCache``).
/// Top-level `ctLogList`: the path of a CT log list in Chrome's v3 schema (``CTLogList``), relative to the file.
///
/// Not `Codable`: a configuration is read only through ``parse(_:publicSuffixes:)`` (or
/// `ConfiguredTrustEvaluator(contentsOf:)`), where every member is validated, and written with
/// ``jsonText()`` in the same form — a decoder that filled the fields directly would skip every check.
public struct TrustConfiguration: Sendable, Hashable {
    /// The format version this library reads and writes.
    public static let currentVersion = 1

    /// The format version of the file.
    public var version: Int
    /// The entry for hosts that no host entry covers.
    public var base: Entry
    /// The per-host entries.
    public var hosts: [Entry]
    /// Whether (and how much) trusted decisions may be reused for new connections presenting the
    /// identical chain for the same host under this configuration (see ``TrustEvaluationCache``);
    /// `nil` evaluates every chain from scratch. In the file: `"evaluationCache": false`, or
    /// `{"capacity": 1024, "timeToLiveSeconds": 300}` (the default when the member is absent).
    public var evaluationCache: EvaluationCacheSettings?
    /// The CT log list file (Chrome's v3 schema), relative to the configuration file's folder; needed by any entry
    /// whose ``Entry/certificateTransparency`` is not off.
    public var ctLogList: String?

    /// Creates a configuration from a base entry and host entries.
    public init(
        version: Int = TrustConfiguration.currentVersion, base: Entry = Entry(), hosts: [Entry] = [],
        evaluationCache: EvaluationCacheSettings? = EvaluationCacheSettings()
    ) {
        self.version = version
        self.base = base
        self.hosts = hosts
        self.evaluationCache = evaluationCache
    }

    /// Whether an entry's pins refuse the connection or only lead to a report.
    public enum Mode: String, Sendable, Hashable, Codable {
        case enforce
        case reportOnly = "report-only"
    }

    /// Certificates an entry trusts as anchors, added to the system roots or replacing them.
    public struct Anchors: Sendable, Hashable {
        /// Files (PEM or DER, or folders) relative to the configuration file.
        public var certificates: [String] = []
        /// Inline PEM.
        public var pem: [String] = []
        /// Replace the system roots instead of adding to them.
        public var replaceSystem: Bool = false

        /// Creates an anchor set.
        public init(certificates: [String] = [], pem: [String] = [], replaceSystem: Bool = false) {
            self.certificates = certificates
            self.pem = pem
            self.replaceSystem = replaceSystem
        }

        /// Reads the certificates: files (or folders) relative to `baseDirectory`, then the inline
        /// PEM. Each unreadable source is a problem at its JSON path under `path`.
        public func load(baseDirectory: String, path: String) -> (certificates: [Certificate], problems: [TrustConfigurationProblem]) {
            var certificates: [Certificate] = []
            var problems: [TrustConfigurationProblem] = []
            for (index, file) in self.certificates.enumerated() {
                let full = file.hasPrefix("/") ? file : baseDirectory.joiningPath(file)
                do {
                    let loaded =
                        LocalFile.isFolder(full) ? try CertificateSource.certificates(inDirectory: full) : try CertificateSource.certificates(atPath: full)
                    if loaded.isEmpty {
                        problems.append(TrustConfigurationProblem(path: "\(path).certificates[\(index)]", message: "\(full) holds no certificate"))
                    }
                    certificates += loaded
                } catch {
                    problems.append(TrustConfigurationProblem(path: "\(path).certificates[\(index)]", message: "\(error)"))
                }
            }
            for (index, text) in pem.enumerated() {
                do {
                    certificates += try CertificateSource.certificates(pem: text, source: "\(path).pem[\(index)]")
                } catch {
                    problems.append(TrustConfigurationProblem(path: "\(path).pem[\(index)]", message: "\(error)"))
                }
            }
            return (certificates, problems)
        }
    }

    /// The SPKI pins of an entry.
    public struct Pins: Sendable, Hashable {
        /// The pinned SPKI SHA-256 hashes.
        public var sha256: [SPKIPin]
        /// When the pin set stops being enforced; `nil` for never.
        public var expires: Date?
        /// Whether an enforced set may hold a single pin (no backup).
        public var allowSinglePin: Bool

        /// Creates a pin set.
        public init(sha256: [SPKIPin], expires: Date? = nil, allowSinglePin: Bool = false) {
            self.sha256 = sha256
            self.expires = expires
            self.allowSinglePin = allowSinglePin
        }

        /// Whether the set is past its expiry at `time` (the expiry instant itself is expired).
        public func isExpired(at time: Date) -> Bool {
            expires.map { time >= $0 } ?? false
        }
    }

    /// Certificate Transparency (see ``CertificateTransparencyPolicy``): in the file,
    /// `{"mode": "off"|"report-only"|"enforce", "customAnchors": false}`.
    public struct CertificateTransparency: Sendable, Hashable {
        /// What a leaf that does not meet the policy comes to.
        public var mode: CertificateTransparencyPolicy.Mode
        /// Whether paths to custom anchors are checked too (default: only paths to system roots).
        public var customAnchors: Bool

        /// Creates CT settings.
        public init(mode: CertificateTransparencyPolicy.Mode, customAnchors: Bool = false) {
            self.mode = mode
            self.customAnchors = customAnchors
        }
    }

    /// Revocation checking (see ``RevocationPolicy``): in the file,
    /// `{"mode": "off"|"soft"|"hard", "depth": "leaf"|"chain", "crls": [PATH…], "exemptShortLived": true}`.
    public struct Revocation: Sendable, Hashable {
        /// How an unknown status is treated.
        public var mode: RevocationPolicy.Mode
        /// Which certificates are checked (default: the leaf).
        public var depth: RevocationPolicy.Depth
        /// CRL files (PEM or DER), relative to the configuration file's folder.
        public var crls: [String]
        /// Whether leaves valid 7 days or less are exempt (default: yes).
        public var exemptShortLived: Bool

        /// Creates revocation settings.
        public init(mode: RevocationPolicy.Mode, depth: RevocationPolicy.Depth = .leaf, crls: [String] = [], exemptShortLived: Bool = true) {
            self.mode = mode
            self.depth = depth
            self.crls = crls
            self.exemptShortLived = exemptShortLived
        }

        /// The policy, with the CRL files read from `baseDirectory`; unreadable ones are problems at `path`.
        package func load(baseDirectory: String, path: String) -> (policy: RevocationPolicy, problems: [TrustConfigurationProblem]) {
            var lists: [CertificateRevocationList] = []
            var problems: [TrustConfigurationProblem] = []
            for (index, file) in crls.enumerated() {
                let full = file.hasPrefix("/") ? file : baseDirectory.joiningPath(file)
                do {
                    lists += try CertificateRevocationList.load(path: full)
                } catch {
                    problems.append(TrustConfigurationProblem(path: "\(path).crls[\(index)]", message: "\(error)"))
                }
            }
            let policy = RevocationPolicy(
                mode: mode, depth: depth, shortLivedExemption: exemptShortLived ? RevocationPolicy.shortLivedCertificateLimit : nil, crls: lists)
            return (policy, problems)
        }
    }

    /// Settings honoured only in DEBUG builds, such as a debugging proxy's CA.
    public struct DebugOverrides: Sendable, Hashable {
        /// Extra anchors, such as a debugging proxy's CA.
        public var anchors: Anchors
        /// Whether a chain to these anchors is accepted without the entry's pins (a proxy CA re-signs everything).
        public var overridesPins: Bool

        /// Creates debug overrides.
        public init(anchors: Anchors, overridesPins: Bool = false) {
            self.anchors = anchors
            self.overridesPins = overridesPins
        }
    }

    /// The settings for the hosts one pattern covers, or for every other host (the base entry).
    public struct Entry: Sendable, Hashable {
        /// Nil for the base entry.
        public var host: HostPattern?
        /// Hosts the pattern matches that fall through to the next match instead.
        public var exclude: [HostPattern] = []
        /// The anchors; `nil` for the system roots.
        public var anchors: Anchors?
        /// The pins; `nil` for no pinning.
        public var pins: Pins?
        /// Whether a pin failure refuses the connection or is only reported.
        public var mode: Mode = .enforce
        /// The smallest RSA key accepted, in bits.
        public var minimumRSABits: Int = 2048
        /// The smallest EC key accepted, in bits.
        public var minimumECBits: Int = 256
        /// Always `false`: SHA-1 signatures are never accepted.
        public var allowSHA1: Bool = false
        /// Where failure reports are sent (`https` only).
        public var reportURIs: [URL] = []
        /// Overrides honoured only in DEBUG builds.
        public var debugOverrides: DebugOverrides?
        /// Revocation checking for these hosts; `nil`: off.
        public var revocation: Revocation?
        /// Certificate Transparency for these hosts; `nil`: off.
        public var certificateTransparency: CertificateTransparency?
        /// Whether a ``ReloadingTrustConfiguration`` may put this entry in force although its pins match no key on
        /// the path a host it covers presented in its last trusted connection (a compromised key removed on
        /// purpose). `false` by default: such a pin set is refused as `wouldLockOut`. In the file: `"allowLockout": true`.
        public var allowLockout: Bool = false
        /// The lowest TLS version accepted from these hosts (`minimumTLSVersion`: `"1.2"`, the default, or `"1.3"`).
        /// The engine keeps it; the module that makes the connection applies it.
        public var minimumTLSVersion: TLSMinimum = .tls12
        /// The client certificate to present to these hosts when they ask for one (`clientIdentity`), if any. The
        /// engine keeps where it is; the module that makes the connection loads it.
        public var clientIdentity: ClientIdentityReference?

        /// Creates an entry with default settings for `host` (`nil` for the base entry).
        public init(host: HostPattern? = nil) {
            self.host = host
        }
    }

    /// The entry for `host`: exact host first, then the most specific pattern, skipping entries that
    /// exclude it; else `base`.
    package func entry(for host: String) -> Entry {
        guard let name = try? PeerName(host: host), let index = hostIndex(for: name) else { return base }
        return hosts[index]
    }

    /// The index in ``hosts`` of the entry for `name` (nil: the base entry applies): the most
    /// specific pattern that matches (an exact host being the most specific) and does not exclude it.
    package func hostIndex(for name: PeerName) -> Int? {
        var best: (index: Int, specificity: Int)?
        for (index, entry) in hosts.enumerated() {
            guard let pattern = entry.host, pattern.matches(name), !entry.exclude.contains(where: { $0.matches(name) }) else { continue }
            if pattern.specificity > (best?.specificity ?? Int.min) { best = (index, pattern.specificity) }
        }
        return best?.index
    }
}

import Foundation
import X509

/// Per-host trust configuration in one portable, versioned JSON file: a base entry plus host entries.
///
/// ```json
/// {
///   "version": 1,
///   "base": { "minimumTLSVersion": "1.2" },
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
/// - `minimumTLSVersion`: `"1.2"` (default) or `"1.3"`; `minimumRSABits` (≥ 2048), `minimumECBits` (≥ 256),
///   `allowSHA1`: false.
/// - `reportURIs`: `https` URIs for failure reports (none by default).
/// - `clientIdentity`: `{"pkcs12": PATH, "passphraseEnvironment": NAME}` or `{"certificate": PATH, "key": PATH}`.
/// - `debugOverrides`: `{"anchors": {…}, "overridesPins": false}` — honoured only in DEBUG builds.
public struct TrustConfiguration: Sendable, Hashable, Codable {
    public static let currentVersion = 1

    public var version: Int
    public var base: Entry
    public var hosts: [Entry]

    public init(version: Int = TrustConfiguration.currentVersion, base: Entry = Entry(), hosts: [Entry] = []) {
        self.version = version
        self.base = base
        self.hosts = hosts
    }

    public enum Mode: String, Sendable, Hashable, Codable {
        case enforce
        case reportOnly = "report-only"
    }

    public struct Anchors: Sendable, Hashable, Codable {
        /// Files (PEM or DER, or folders) relative to the configuration file.
        public var certificates: [String] = []
        /// Inline PEM.
        public var pem: [String] = []
        /// Replace the system roots instead of adding to them.
        public var replaceSystem: Bool = false

        public init(certificates: [String] = [], pem: [String] = [], replaceSystem: Bool = false) {
            self.certificates = certificates
            self.pem = pem
            self.replaceSystem = replaceSystem
        }
    }

    public struct Pins: Sendable, Hashable, Codable {
        public var sha256: [SPKIPin]
        public var expires: Date?
        public var allowSinglePin: Bool

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

    public struct ClientIdentityReference: Sendable, Hashable, Codable {
        public var pkcs12: String?
        public var passphraseEnvironment: String?
        public var certificate: String?
        public var key: String?

        public init(pkcs12: String? = nil, passphraseEnvironment: String? = nil, certificate: String? = nil, key: String? = nil) {
            self.pkcs12 = pkcs12
            self.passphraseEnvironment = passphraseEnvironment
            self.certificate = certificate
            self.key = key
        }
    }

    public struct DebugOverrides: Sendable, Hashable, Codable {
        public var anchors: Anchors
        /// Whether a chain to these anchors is accepted without the entry's pins (a proxy CA re-signs everything).
        public var overridesPins: Bool

        public init(anchors: Anchors, overridesPins: Bool = false) {
            self.anchors = anchors
            self.overridesPins = overridesPins
        }
    }

    public struct Entry: Sendable, Hashable, Codable {
        /// Nil for the base entry.
        public var host: HostPattern?
        public var exclude: [HostPattern] = []
        public var anchors: Anchors?
        public var pins: Pins?
        public var mode: Mode = .enforce
        public var minimumTLSVersion: String = "1.2"
        public var minimumRSABits: Int = 2048
        public var minimumECBits: Int = 256
        public var allowSHA1: Bool = false
        public var reportURIs: [URL] = []
        public var clientIdentity: ClientIdentityReference?
        public var debugOverrides: DebugOverrides?

        public init(host: HostPattern? = nil) {
            self.host = host
        }
    }

    /// The entry for `host`: exact host first, then the most specific pattern, skipping entries that
    /// exclude it; else `base`.
    public func entry(for host: String) -> Entry {
        guard let name = try? PeerName(host: host) else { return base }
        let candidates = hosts.filter { entry in
            guard let pattern = entry.host, pattern.matches(name) else { return false }
            return !entry.exclude.contains { $0.matches(name) }
        }
        return candidates.max { ($0.host?.specificity ?? 0) < ($1.host?.specificity ?? 0) } ?? base
    }
}

import ArgumentParser
import Trust
import TrustHTTP
import TrustNIO
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Trust options shared by `evaluate` and `get` (each command names its own anchor-file option:
/// `--anchors` for `evaluate`, curl's `--cacert` for `get`).
struct TrustOptions: ParsableArguments {
    @Flag(name: .long, help: "Use only the given anchors, not the system roots.")
    var anchorsOnly = false

    @Option(
        name: .long,
        help: "The public roots: system+mozilla (the default: the machine's CA bundle and Mozilla's root store, built in), system or mozilla.")
    var roots: String?

    /// The `--roots` choice (the default store when not given).
    var rootStore: RootStore {
        get throws { try Self.rootStore(named: roots) }
    }

    /// The store a `--roots` value names (the default store for none); another name is a usage error.
    static func rootStore(named name: String?) throws -> RootStore {
        guard let name else { return .default }
        guard let store = RootStore(name: name) else { throw UsageError("--roots must be system+mozilla, system or mozilla") }
        return store
    }

    @Option(name: .long, help: "An SPKI pin (sha256/BASE64 or pin-sha256=\"BASE64\") that must be on the validated path; repeatable.")
    var pin: [String] = []

    @Option(name: .long, help: "AFSecurityPolicy pinning mode: none, public-key or certificate.")
    var mode: String?

    @Option(name: .long, help: "A certificate to pin (with --mode); repeatable.")
    var pinnedCert: [String] = []

    @Flag(name: .long, help: "AFSecurityPolicy allowInvalidCertificates (with --mode).")
    var allowInvalid = false

    @Flag(name: .long, help: "Do not check the name (AFSecurityPolicy validatesDomainName = NO).")
    var noValidateDomain = false

    @OptionGroup var revocationOptions: RevocationOptions

    @OptionGroup var ctOptions: CTOptions

    @OptionGroup var spiffeOptions: SPIFFEOptions

    func validate() throws {
        if mode == nil && (allowInvalid || !pinnedCert.isEmpty) {
            throw ValidationError("--allow-invalid and --pinned-cert need --mode none|public-key|certificate")
        }
        if revocationOptions.fetches, mode != nil {
            throw ValidationError("--revocation with --mode checks only --crlfile CRLs: add --no-fetch")
        }
        if spiffeOptions.isUsed && (mode != nil || anchorsOnly || noValidateDomain || revocationOptions.fetches) {
            throw ValidationError(
                "--spiffe-id checks no host name and trusts only its bundles: without --mode, --anchors-only, --no-validate-domain; with --revocation, add --no-fetch"
            )
        }
    }

    /// What the options ask for: AFNetworking semantics, or the engine with anchors, pins and name check.
    enum Policy {
        case securityPolicy(SecurityPolicy)
        case validator(PathValidator)
        /// A validator that first asks OCSP responders and fetches the CRLs the chain's certificates point to (`--revocation` without `--no-fetch`).
        case fetching(RevocationCheckingEvaluator)
    }

    /// `revocationBudget`: how long revocation fetching may wait in one evaluation (``RevocationCheckingEvaluator/fetchBudget``).
    func policy(anchors: [Certificate], revocationBudget: Duration = RevocationCheckingEvaluator.defaultFetchBudget) throws -> Policy {
        var pins: Set<SPKIPin> = []
        for text in pin {
            do { pins.insert(try SPKIPin(parsing: text)) } catch { throw UsageError("--pin: \(error.description)") }
        }
        let trustAnchors = TrustAnchors(includesSystemRoots: !anchorsOnly, certificates: anchors, rootStore: try rootStore)
        var validation = ValidationPolicy.webPKI
        validation.pins = pins
        validation.revocation = try revocationOptions.policy()
        validation.certificateTransparency = try ctOptions.policy()
        if let spiffe = try spiffeOptions.evaluator(policy: validation) { return .validator(spiffe.validator) }
        guard let mode else {
            validation.checksPeerName = !noValidateDomain
            let name = pins.isEmpty ? "default" : "default + \(pins.count) pins"
            if revocationOptions.fetches {
                return .fetching(try revocationOptions.fetchingEvaluator(anchors: trustAnchors, policy: validation, name: name, budget: revocationBudget))
            }
            return .validator(PathValidator(anchors: trustAnchors, policy: validation, name: name))
        }
        let pinningMode: PinningMode
        switch mode {
        case "none": pinningMode = .none
        case "public-key", "publickey", "publicKey": pinningMode = .publicKey
        case "certificate": pinningMode = .certificate
        default: throw UsageError("--mode must be none, public-key or certificate")
        }
        var pinned: [Certificate] = []
        for path in pinnedCert { pinned += try Self.load(path, what: "--pinned-cert") }
        return .securityPolicy(
            SecurityPolicy(
                pinningMode: pinningMode, pinnedCertificates: pinned, allowInvalidCertificates: allowInvalid,
                validatesDomainName: !noValidateDomain, systemAnchors: trustAnchors, validationPolicy: validation))
    }

    /// A `--config` file made ready to evaluate; its problems are printed (with their JSON paths) and make a usage error.
    static func configuration(_ path: String) throws -> ConfiguredTrustEvaluator {
        do {
            return try ConfiguredTrustEvaluator(contentsOf: path)
        } catch {
            for problem in error.problems { printError(problem.description) }
            throw UsageError("--config \(path) is not a valid trust configuration")
        }
    }

    /// curl's `--resolve HOST:PORT:ADDRESS` entries as `host:port` (lowercased) → address.
    static func resolveMap(_ entries: [String]) throws -> [String: String] {
        var map: [String: String] = [:]
        for entry in entries {
            let parts = entry.split(separator: ":", maxSplits: 2).map(String.init)
            // A port outside 1–65535 would never match a URL's (TrustHTTPClient refuses those), or match one that wrapped.
            let digits = parts.count == 3 ? parts[1].drop { $0 == "0" } : ""
            guard parts.count == 3, !parts[1].isEmpty, parts[1].utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                digits.count <= 5, let port = Int(digits), (1...65_535).contains(port)
            else { throw UsageError("--resolve takes HOST:PORT:ADDRESS, PORT 1-65535") }
            // curl writes an IPv6 address in brackets: [::1].
            var address = Substring(parts[2])
            if address.hasPrefix("[") && address.hasSuffix("]") && address.count >= 2 { address = address.dropFirst().dropLast() }
            map["\(parts[0].lowercased()):\(port)"] = String(address)
        }
        return map
    }

    /// Certificates from a file or folder; unreadable input is a usage error (exit 2).
    static func load(_ path: String, what: String) throws -> [Certificate] {
        do {
            return try CertificateSource.certificates(atPath: path)
        } catch {
            throw UsageError("\(what): \(error.description)")
        }
    }
}

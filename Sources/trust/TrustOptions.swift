import ArgumentParser
import Foundation
import Trust
import TrustHTTP
import X509

/// Trust options shared by `evaluate` and `get` (each command names its own anchor-file option:
/// `--anchors` for `evaluate`, curl's `--cacert` for `get`).
struct TrustOptions: ParsableArguments {
    @Flag(name: .long, help: "Use only the given anchors, not the system roots.")
    var anchorsOnly = false

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

    @Option(name: .long, help: "A CRL file (PEM or DER; several PEM CRLs may follow each other) to check revocation against; repeatable. With no other revocation option, checking is hard and covers the chain, as curl's --crlfile (OpenSSL's CRL_CHECK_ALL): every CA but the anchor needs its issuer's CRL too.")
    var crlfile: [String] = []

    @Option(name: .long, help: "Revocation checking: off, soft (unknown status allowed, with a note) or hard (unknown refused). Default: off, or hard with --crlfile.")
    var revocation: String?

    @Option(name: .long, help: "Which certificates revocation checking covers: leaf or chain (all but the anchor). Default: chain with --crlfile, else leaf.")
    var revocationDepth: String?

    @Flag(name: .long, help: "With --revocation: decide only from --crlfile CRLs; fetch nothing from the certificates' CRL distribution points (fetched by default).")
    var noFetch = false

    func validate() throws {
        if mode == nil && (allowInvalid || !pinnedCert.isEmpty) {
            throw ValidationError("--allow-invalid and --pinned-cert need --mode none|public-key|certificate")
        }
        if let revocation, RevocationPolicy.Mode(rawValue: revocation) == nil {
            throw ValidationError("--revocation must be off, soft or hard")
        }
        if let revocationDepth, RevocationPolicy.Depth(rawValue: revocationDepth) == nil {
            throw ValidationError("--revocation-depth must be leaf or chain")
        }
        if let revocation, revocation != "off", mode != nil, !noFetch {
            throw ValidationError("--revocation with --mode checks only --crlfile CRLs: add --no-fetch")
        }
    }

    /// Revocation as the options ask: the `--crlfile` CRLs, `--revocation` (hard when CRL files are given and it is
    /// not), `--revocation-depth` (chain when CRL files are given and it is not: curl's `--crlfile` sets OpenSSL's
    /// `X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL`). An unreadable or malformed CRL file is a ``CRLFileError``.
    func revocationPolicy() throws -> RevocationPolicy {
        var crls: [CertificateRevocationList] = []
        for path in crlfile {
            do {
                crls += try CertificateRevocationList.load(path: path)
            } catch {
                throw CRLFileError(description: "--crlfile \(error.detail)")
            }
        }
        let mode = revocation.flatMap(RevocationPolicy.Mode.init(rawValue:)) ?? (crls.isEmpty ? .off : .hard)
        let depth = revocationDepth.flatMap(RevocationPolicy.Depth.init(rawValue:)) ?? (crls.isEmpty ? .leaf : .chain)
        return RevocationPolicy(mode: mode, depth: depth, crls: crls)
    }

    /// Revocation options are not silently dropped where another source decides trust (a configuration file).
    func refuseRevocationOptions(with other: String) throws {
        if !crlfile.isEmpty || revocation != nil || revocationDepth != nil || noFetch {
            throw UsageError("--crlfile, --revocation, --revocation-depth and --no-fetch do not combine with \(other)")
        }
    }

    /// A `--crlfile` that cannot be read or parsed (curl's CURLE_SSL_CRL_BADFILE, 82, in `get`; a usage error, 2, in `evaluate`).
    struct CRLFileError: Error, CustomStringConvertible {
        var description: String
    }

    /// What the options ask for: AFNetworking semantics, or the engine with anchors, pins and name check.
    enum Policy {
        case securityPolicy(SecurityPolicy)
        case validator(PathValidator)
        /// A validator that first fetches the CRLs the chain's certificates point to (`--revocation` without `--no-fetch`).
        case fetching(RevocationCheckingEvaluator)
    }

    func policy(anchors: [Certificate]) throws -> Policy {
        var pins: Set<SPKIPin> = []
        for text in pin {
            do { pins.insert(try SPKIPin(parsing: text)) } catch { throw UsageError("--pin: \(error.description)") }
        }
        let trustAnchors = TrustAnchors(includesSystemRoots: !anchorsOnly, certificates: anchors)
        var validation = ValidationPolicy.webPKI
        validation.pins = pins
        validation.revocation = try revocationPolicy()
        guard let mode else {
            validation.checksPeerName = !noValidateDomain
            let name = pins.isEmpty ? "default" : "default + \(pins.count) pins"
            if revocation != nil && validation.revocation.mode != .off && !noFetch {
                return .fetching(try RevocationCheckingEvaluator(anchors: trustAnchors, policy: validation, name: name + " + fetched CRLs"))
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
        return .securityPolicy(SecurityPolicy(
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
            guard parts.count == 3, Int(parts[1]) != nil else { throw UsageError("--resolve takes HOST:PORT:ADDRESS") }
            // curl writes an IPv6 address in brackets: [::1].
            var address = Substring(parts[2])
            if address.hasPrefix("[") && address.hasSuffix("]") && address.count >= 2 { address = address.dropFirst().dropLast() }
            map["\(parts[0].lowercased()):\(parts[1])"] = String(address)
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

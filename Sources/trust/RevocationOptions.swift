import ArgumentParser
import Trust
import TrustHTTP

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Revocation options shared by `evaluate`, `get` and `inspect`: curl's `--crlfile`, and the engine's mode, depth
/// and fetching switches.
struct RevocationOptions: ParsableArguments {
    @Option(
        name: .long,
        help:
            "A CRL file (PEM or DER; several PEM CRLs may follow each other) to check revocation against; repeatable. With no other revocation option, checking is hard and covers the chain, as curl's --crlfile (OpenSSL's CRL_CHECK_ALL): every CA but the anchor needs its issuer's CRL too."
    )
    var crlfile: [String] = []

    @Option(
        name: .long,
        help: "Revocation checking: off, soft (unknown status allowed, with a note) or hard (unknown refused). Default: off, or hard with --crlfile.")
    var revocation: String?

    @Option(name: .long, help: "Which certificates revocation checking covers: leaf or chain (all but the anchor). Default: chain with --crlfile, else leaf.")
    var revocationDepth: String?

    @Flag(
        name: .long,
        help:
            "With --revocation: decide only from --crlfile CRLs; ask no OCSP responder and fetch nothing from the certificates' CRL distribution points (both by default)."
    )
    var noFetch = false

    @Flag(name: .long, help: "With --revocation: do not ask the certificates' OCSP responders; fetch CRLs from their distribution points only.")
    var noOcsp = false

    @Flag(name: .long, help: "With --revocation: send a random nonce in OCSP requests (RFC 8954) and refuse a response that echoes another.")
    var ocspNonce = false

    func validate() throws {
        if let revocation, RevocationPolicy.Mode(rawValue: revocation) == nil {
            throw ValidationError("--revocation must be off, soft or hard")
        }
        if let revocationDepth, RevocationPolicy.Depth(rawValue: revocationDepth) == nil {
            throw ValidationError("--revocation-depth must be leaf or chain")
        }
        if (noOcsp || ocspNonce) && !fetches {
            throw ValidationError("--no-ocsp and --ocsp-nonce apply to fetching: they need --revocation soft|hard without --no-fetch")
        }
    }

    /// Whether any revocation option was given.
    var isUsed: Bool { !crlfile.isEmpty || revocation != nil || revocationDepth != nil || noFetch || noOcsp || ocspNonce }

    /// Whether OCSP responders are asked and CRLs fetched from distribution points: `--revocation` (not off) without `--no-fetch`.
    var fetches: Bool { revocation != nil && revocation != "off" && !noFetch }

    /// The evaluator that fetches: OCSP unless `--no-ocsp` (with a nonce for `--ocsp-nonce`), then CRLs, waiting for
    /// them `budget` at most in one evaluation (then an unknown status: soft allows it with a note, hard refuses).
    func fetchingEvaluator(anchors: TrustAnchors, policy: ValidationPolicy, name: String, budget: Duration = RevocationCheckingEvaluator.defaultFetchBudget)
        throws -> RevocationCheckingEvaluator
    {
        let ocsp = noOcsp ? nil : try OCSPFetcher(options: OCSPFetcher.Options(nonce: ocspNonce))
        return try RevocationCheckingEvaluator(
            anchors: anchors, policy: policy, ocspFetcher: ocsp, usesOCSP: !noOcsp, name: name + " + " + fetchedSources, fetchBudget: budget)
    }

    /// The fetch budget for `get`: the default, or 40 % of the connect timeout or of `-m` when either is shorter —
    /// revocation checking runs inside the handshake, under both, and must leave it room to finish.
    static func fetchBudget(connectTimeout: Double, maxTime: Double?) -> Duration {
        let shortest = min(connectTimeout, maxTime ?? connectTimeout)
        let fallback = RevocationCheckingEvaluator.defaultFetchBudget
        // Saturating: a timeout whose 40 % is not below the default (however large, or not a number) leaves the
        // default; Int64(_:) of a Double traps beyond Int64.max.
        guard shortest * 0.4 < Double(fallback.components.seconds) + 1 else { return fallback }
        return min(fallback, .milliseconds(Int64(max(0, shortest * 400))))
    }

    /// What the fetching evaluator's name says it fetches.
    var fetchedSources: String { noOcsp ? "fetched CRLs" : "OCSP + fetched CRLs" }

    /// Revocation as the options ask: the `--crlfile` CRLs, `--revocation` (hard when CRL files are given and it is
    /// not), `--revocation-depth` (chain when CRL files are given and it is not: curl's `--crlfile` sets OpenSSL's
    /// `X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL`). An unreadable or malformed CRL file is a ``CRLFileError``.
    func policy() throws -> RevocationPolicy {
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
    func refuse(with other: String) throws {
        if isUsed { throw UsageError("--crlfile, --revocation, --revocation-depth, --no-fetch, --no-ocsp and --ocsp-nonce do not combine with \(other)") }
    }

    /// A `--crlfile` that cannot be read or parsed (curl's CURLE_SSL_CRL_BADFILE, 82, in `get`; a usage error, 2, elsewhere).
    struct CRLFileError: Error, CustomStringConvertible {
        var description: String
    }
}

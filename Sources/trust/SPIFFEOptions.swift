import ArgumentParser
import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// SPIFFE options shared by `evaluate` and `get`: trust the peer by its SPIFFE ID (an X.509-SVID) instead of a
/// host name, against the bundle of its own trust domain.
struct SPIFFEOptions: ParsableArguments {
    @Option(
        name: .customLong("spiffe-id"),
        help:
            "Trust the peer by its SPIFFE ID (X.509-SVID) instead of its host name: spiffe://DOMAIN/PATH exactly, spiffe://DOMAIN any ID of the trust domain, spiffe://DOMAIN/PATH/* that path and below (whole segments); repeatable (any one). Needs --spiffe-bundle."
    )
    var spiffeID: [String] = []

    @Option(
        name: .customLong("spiffe-bundle"),
        help:
            "The X.509 authorities of a SPIFFE trust domain (PEM or DER file, or folder): FILE, each certificate's own spiffe:// URI SAN naming its trust domain, or DOMAIN=FILE; repeatable. Replaces the system roots and --anchors/--cacert."
    )
    var spiffeBundle: [String] = []

    /// Whether a SPIFFE option was given.
    var isUsed: Bool { !spiffeID.isEmpty || !spiffeBundle.isEmpty }

    func validate() throws {
        if spiffeID.isEmpty != spiffeBundle.isEmpty {
            throw ValidationError("--spiffe-id and --spiffe-bundle go together: the IDs to allow and the bundles that vouch for them")
        }
    }

    /// The evaluator the options ask for under `policy` (its pins, CRLs and CT; never a host-name check); `nil` without
    /// SPIFFE options. A bad ID, an unreadable bundle or IDs no bundle can vouch for are usage errors.
    func evaluator(policy: ValidationPolicy) throws -> SPIFFETrustEvaluator? {
        guard isUsed else { return nil }
        var matchers: [SPIFFEIDMatcher] = []
        for text in spiffeID {
            do { matchers.append(try SPIFFEIDMatcher(parsing: text)) } catch { throw UsageError("--spiffe-id: \(error.description)") }
        }
        var bundles: [SPIFFEBundle] = []
        for entry in spiffeBundle {
            var domain: SPIFFETrustDomain?
            var path = entry
            // DOMAIN=FILE when the text before the first "=" is a trust domain name; otherwise the whole is a path.
            if let equals = entry.firstIndex(of: "="), let named = try? SPIFFETrustDomain(parsing: String(entry[..<equals])) {
                domain = named
                path = String(entry[entry.index(after: equals)...])
            }
            do { bundles += try SPIFFEBundle.load(contentsOf: path, trustDomain: domain) } catch { throw UsageError("--spiffe-bundle: \(error.description)") }
        }
        do {
            return try SPIFFETrustEvaluator(bundles: SPIFFETrustBundles(bundles), allowedIDs: matchers, policy: policy)
        } catch {
            throw UsageError("--spiffe-id: \(error.description)")
        }
    }
}

// Workloads in a service mesh (SPIRE, Istio, Linkerd) know each other by SPIFFE ID, not by DNS name: a client calls a
// peer at an IP address and trusts it by the ID in its X.509-SVID; a server requires client SVIDs from its trust
// domain and authorises each request by the caller's ID.
import Foundation
import Trust
import TrustNIO
import X509

/// One trust domain's workload identities.
public struct MeshIdentity: Sendable {
    /// The trust domains trusted, with their authorities.
    public let bundles: SPIFFETrustBundles
    /// This workload's trust domain.
    public let trustDomain: SPIFFETrustDomain
    /// This trust domain's bundle.
    public let bundle: SPIFFEBundle

    /// Trusts `anchors` (the SPIRE agent's bundle) for `trustDomain`.
    public init(trustDomain name: String, anchors: [Certificate]) throws {
        trustDomain = try SPIFFETrustDomain(parsing: name)
        bundle = SPIFFEBundle(trustDomain: trustDomain, anchors: anchors)
        bundles = SPIFFETrustBundles([bundle])
    }

    /// An evaluator for calling peers whose ID is `ids` (exact, or a path prefix ending `/*`).
    public func peers(_ ids: [String]) throws -> SPIFFETrustEvaluator {
        try SPIFFETrustEvaluator(bundles: bundles, allowedIDs: ids.map { try SPIFFEIDMatcher(parsing: $0) })
    }

    /// What a peer evaluator accepts, for the startup log.
    public static func describe(_ evaluator: SPIFFETrustEvaluator) -> [String] {
        let domains = evaluator.bundles.anchorsByTrustDomain.map { "\($0.key.name) (\($0.value.count) authorities)" }.sorted()
        return ["trust domains: \(domains.joined(separator: ", "))", "purpose: \(evaluator.policy.purpose)"]
            + evaluator.allowedIDs.map { "allowed: \($0) in \($0.allowedTrustDomain.id)" }
    }

    /// A server's client-certificate requirements: an SVID from this trust domain under one of `prefixes`.
    public func callers(_ prefixes: [String]) throws -> ClientAuthentication {
        try ClientAuthentication(
            requirement: .required, spiffeBundles: bundles, allowedSPIFFEIDs: prefixes.map { try SPIFFEIDMatcher(parsing: $0) }, pins: [],
            validationPolicy: ValidationPolicy(purpose: .tlsClient, checksPeerName: false))
    }

    /// The anchors a server's TLS configuration names as acceptable CAs, and what it requires, for the startup log.
    public static func describe(_ callers: ClientAuthentication) -> [String] {
        [
            "requirement: \(callers.requirement)",
            "acceptable CAs: \(callers.spiffeBundles?.anchors(for: callers.allowedSPIFFEIDs[0].allowedTrustDomain).count ?? 0)",
            "callers: \(callers.allowedSPIFFEIDs.map(\.description).joined(separator: ", "))", "pins: \(callers.pins.count)",
            "names: \(callers.allowedNames.sorted().joined(separator: ", "))", "purpose: \(callers.validationPolicy.purpose)",
            "validator: \(callers.validator.name)", "logs: \(callers.logger == nil ? "no" : "yes")",
        ]
    }

    /// One line for the startup log.
    public var summary: String { "trust domain \(bundle.trustDomain.name): \(bundle.anchors.count) authorities" }

    /// What a caller may do, from its verified SVID: its service account's path decides.
    public enum Role: Equatable, Sendable { case frontend, batch, none }

    /// The caller's role: `/ns/prod/sa/web` is the frontend, anything under `/ns/batch` a batch job.
    public func role(of caller: VerifiedClient) -> Role {
        // An operator's certificate from the organisation's CA (no SVID) names its host: the batch runner.
        if caller.spiffeID == nil, caller.subjectAlternativeNames.contains("ops-runner.\(trustDomain.name)") { return .batch }
        guard let id = caller.spiffeID, id.trustDomain == trustDomain else { return .none }
        if id.path == "/ns/prod/sa/web" { return .frontend }
        if (try? SPIFFEIDMatcher(parsing: "spiffe://\(trustDomain.name)/ns/batch/*"))?.matches(id) == true { return .batch }
        return .none
    }

    /// An ID typed by an operator (a policy file, a flag), checked as SPIFFE-ID §2 defines it; the problem's code.
    public func id(_ text: String) -> Result<SPIFFEID, SPIFFEIDError> {
        do {
            let id = try SPIFFEID(parsing: text)
            // Built again from its parts, it is the same ID: one spelling per ID.
            return .success(try SPIFFEID(trustDomain: id.trustDomain, path: id.path))
        } catch {
            return .failure(error)
        }
    }
}

import SwiftASN1
import X509

/// Validates a candidate path as an X.509-SVID path (X509-SVID.md) and the leaf's SPIFFE ID against the allowed ones:
///
/// - the leaf holds exactly one URI SAN (§2, §5.2), a valid SPIFFE ID with the `spiffe` scheme (§5.2, SPIFFE-ID.md §2)
///   and a non-root path (§3.1, §5.2): ``TrustFailureReason/Kind/svidURICount``,
///   ``TrustFailureReason/Kind/svidInvalidSPIFFEID``;
/// - the leaf is no CA, its keyUsage is present, critical, asserts digitalSignature and neither keyCertSign nor
///   cRLSign (§4.1, §4.3, §5.2); without a subject its URI SAN is critical (§3.1);
/// - every signing certificate above it is a CA with a present keyUsage asserting keyCertSign (§4.1, §4.3); one that
///   is not the trust anchor is also held to the SVID rules (§3.2, §4.3): its keyUsage critical, a SPIFFE ID it
///   holds without a path. A bundle's root is an authority of the trust domain (§5.1), not necessarily an SVID: a
///   non-critical keyUsage or a SPIFFE ID with a path there does not refuse the path;
/// - the path ends at an authority of the leaf's own trust domain (SPIFFE-ID.md §3, §3.1):
///   ``TrustFailureReason/Kind/spiffeTrustDomainNotTrusted``;
/// - one of the matchers allows the ID: ``TrustFailureReason/Kind/spiffeIDNotAllowed``.
///
/// A broken MUST is ``TrustFailureReason/Kind/svidRequirementNotMet``, naming the
/// ``SVIDRequirement``. No DNS or IP name is checked: an SVID identifies a workload by its SPIFFE ID alone.
public struct SPIFFESVIDRule: PathRule {
    /// The anchors of each trusted trust domain.
    package var bundles: SPIFFETrustBundles
    /// The IDs allowed; empty: any ID of a trusted trust domain.
    package var allowedIDs: [SPIFFEIDMatcher]

    /// A rule allowing the IDs `allowedIDs` matches, each on a path to its own trust domain's bundle.
    package init(bundles: SPIFFETrustBundles, allowedIDs: [SPIFFEIDMatcher]) {
        self.bundles = bundles
        self.allowedIDs = allowedIDs
    }

    /// The SAN (critical without a subject, §3.1), the keyUsage (critical, §4.3) and the basicConstraints are judged here.
    public var handledCriticalExtensions: [ASN1ObjectIdentifier] {
        [.X509ExtensionID.subjectAlternativeName, .X509ExtensionID.keyUsage, .X509ExtensionID.basicConstraints]
    }

    /// Every reason `path` is no SVID path for an allowed ID; empty when it is one.
    public func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        let leaf = path.leaf
        let subject = leaf.displayName
        let uris: [String]
        switch path.facts[0].subjectAlternativeNames {
        case .failure(let error):
            return [.malformedCertificate(subject: subject, detail: "subjectAltName: \(error)")]
        case .success(let names):
            uris = Certificate.uniformResourceIdentifiers(in: names)
        }
        var reasons: [TrustFailureReason] = []
        var id: SPIFFEID?
        if uris.count != 1 {
            reasons.append(.svidURICount(subject: subject, uris: uris))
        } else {
            do { id = try SPIFFEID(parsing: uris[0]) } catch { reasons.append(.svidInvalidSPIFFEID(subject: subject, error: error)) }
        }
        // A certificate may hold thousands of URI SANs: each reason names the first few (as TrustFailureReason lists do).
        let shownID = TrustFailureReason.Detail.list(uris, atMost: Self.shownURIs)
        func broken(_ requirement: SVIDRequirement, _ index: Int) {
            let seen = index == 0 ? shownID : TrustFailureReason.Detail.list(path.certificates[index].uniformResourceIdentifiers ?? [], atMost: Self.shownURIs)
            reasons.append(.svidRequirementNotMet(subject: path.certificates[index].displayName, spiffeID: seen, requirement: requirement))
        }
        if id?.isTrustDomainID == true { broken(.leafIDHasPath, 0) }
        for requirement in Self.leafProblems(path.facts[0], keyUsageCritical: leaf.extensions[oid: .X509ExtensionID.keyUsage]?.critical) {
            broken(requirement, 0)
        }
        for index in path.issuerIndices {
            let certificate = path.certificates[index]
            let critical = certificate.extensions[oid: .X509ExtensionID.keyUsage]?.critical
            let anchor = path.isAnchor(index)
            for requirement in Self.signingProblems(path.facts[index], keyUsageCritical: critical, isAnchor: anchor) { broken(requirement, index) }
            if !anchor, let signingID = certificate.spiffeID, !signingID.isTrustDomainID { broken(.signingIDHasNoPath, index) }
        }
        guard let id else { return reasons }
        let anchors = bundles.anchors(for: id.trustDomain)
        if anchors.isEmpty {
            reasons.append(.spiffeTrustDomainNotTrusted(spiffeID: id.description, trustDomain: id.trustDomain.name, anchor: nil))
        } else if path.endsAtAnchor, let anchor = path.certificates.last, !anchors.contains(anchor) {
            reasons.append(.spiffeTrustDomainNotTrusted(spiffeID: id.description, trustDomain: id.trustDomain.name, anchor: anchor.displayName))
        }
        if !allowedIDs.isEmpty && !allowedIDs.contains(where: { $0.matches(id) }) {
            reasons.append(.spiffeIDNotAllowed(spiffeID: id.description, allowed: allowedIDs.map(\.description)))
        }
        return reasons
    }

    /// The leaf MUSTs of X509-SVID.md §3.1, §4.1, §4.3 and §5.2 that `facts` breaks (a malformed extension is
    /// left to the rule that parses it: ``KeyUsageRule``, ``BasicConstraintsRule``).
    static func leafProblems(_ facts: CertificateFacts, keyUsageCritical: Bool?) -> [SVIDRequirement] {
        var problems: [SVIDRequirement] = []
        if case .success(.isCertificateAuthority?) = facts.basicConstraints { problems.append(.leafIsNotCA) }
        if case .success(let usage) = facts.keyUsage {
            if let usage {
                if keyUsageCritical != true { problems.append(.keyUsageCritical) }
                if !usage.digitalSignature { problems.append(.leafDigitalSignature) }
                if usage.keyCertSign { problems.append(.leafNoKeyCertSign) }
                if usage.cRLSign { problems.append(.leafNoCRLSign) }
            } else {
                problems.append(.keyUsagePresent)
            }
        }
        if facts.hasEmptySubject && facts.subjectAlternativeNameIsCritical != true { problems.append(.uriSANCriticalWithoutSubject) }
        return problems
    }

    /// The URI SANs of a certificate a reason names, at most.
    static let shownURIs = 20

    /// The signing-certificate MUSTs of X509-SVID.md §4.1 and §4.3 that `facts` breaks: cA and keyCertSign for every
    /// signing certificate; the keyUsage's criticality (§4.3: "MUST be marked critical" on SVIDs) only for one that is
    /// not the path's trust anchor.
    static func signingProblems(_ facts: CertificateFacts, keyUsageCritical: Bool?, isAnchor: Bool = false) -> [SVIDRequirement] {
        var problems: [SVIDRequirement] = []
        if case .success(let constraints) = facts.basicConstraints, !facts.isCertificateAuthority || constraints == nil {
            problems.append(.signingCertificateIsCA)
        }
        if case .success(let usage) = facts.keyUsage {
            if let usage {
                if keyUsageCritical != true && !isAnchor { problems.append(.keyUsageCritical) }
                if !usage.keyCertSign { problems.append(.signingCertificateKeyCertSign) }
            } else {
                problems.append(.keyUsagePresent)
            }
        }
        return problems
    }
}

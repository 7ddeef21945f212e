import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Checks the certificates of a path against the policy's OCSP responses (RFC 6960 §3.2) and CRLs (RFC 5280 §6.3).
///
/// For each certificate in scope (``RevocationPolicy/Depth``; never the anchor; not a short-lived leaf), the OCSP
/// response kept for it is checked (``OCSPResponse/verdict(for:issuer:at:nonce:)``, against the issuer on the path),
/// then the CRLs issued under its issuer's name are considered. A CRL is used only when it may be (RFC 5280 §6.3.3):
/// nothing in it forbids its use (``CertificateRevocationList/unusableReasons``); it is current at the
/// evaluation time (`thisUpdate` ≤ time ≤ `nextUpdate`); its issuer — the next certificate on the path — may
/// sign CRLs (keyUsage cRLSign when keyUsage is present, §4.2.1.3) and signed it with the key on the path; and
/// its Issuing Distribution Point, if any, covers the certificate (user/CA scope, distribution point names,
/// §5.2.5). The certificate is revoked when a usable CRL lists its serial number (any reason but
/// removeFromCRL) or a usable response says so; good when a usable CRL covering every reason does not list it, or a
/// usable response says good; otherwise its status is unknown, which hard checking refuses and soft checking notes.
struct RevocationRule: PathRule {
    let policy: RevocationPolicy
    /// The CRLs by issuer name.
    private let crls: [DistinguishedName: [CertificateRevocationList]]
    /// Which (CRL, issuer key) pairs verified, so a CRL's signature is checked once per key, not per evaluation.
    private let signatures = SignatureMemo()
    /// Who signed which OCSP response for which issuer key, likewise.
    private let signers = OCSPSignerMemo()

    init(policy: RevocationPolicy) {
        self.policy = policy
        self.crls = Dictionary(grouping: policy.crls, by: \.issuer)
    }

    /// What was found for one certificate.
    enum Status {
        /// Good according to these sources (usable CRLs covering every reason and not listing it; usable responses).
        case good([Evidence])
        /// Revoked, according to `source`.
        case revoked(CertificateRevocationList.Entry, source: String)
        case unknown(String)
    }

    /// A source that vouches for a certificate. Its words are made only when asked for (reports), never on the
    /// evaluation path: formatting dates costs more than the whole check.
    enum Evidence {
        case crl(CertificateRevocationList)
        case ocsp(source: String, thisUpdate: Date, validUntil: Date)

        /// When it vouches (thisUpdate through nextUpdate).
        var window: ClosedRange<Date> {
            let (from, until): (Date, Date) =
                switch self {
                // A usable CRL has a nextUpdate (unusableReasons otherwise).
                case .crl(let crl): (crl.thisUpdate, crl.nextUpdate ?? crl.thisUpdate)
                case .ocsp(_, let thisUpdate, let validUntil): (thisUpdate, validUntil)
                }
            return from <= until ? from...until : from...from
        }

        /// The source in words.
        var source: String {
            switch self {
            case .crl(let crl):
                return "CRL issued by \(crl.issuer) at \(RFC3339.string(crl.thisUpdate)), next update \(RFC3339.string(crl.nextUpdate ?? crl.thisUpdate))"
            case .ocsp(let source, let thisUpdate, let validUntil):
                return "\(source): good at \(RFC3339.string(thisUpdate)), next update \(RFC3339.string(validUntil))"
            }
        }
    }

    func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason] {
        var reasons: [TrustFailureReason] = []
        for position in positions(in: path) {
            let certificate = path.certificates[position]
            switch status(of: path, at: position, time: context.evaluationTime) {
            case .good:
                continue
            case .revoked(let entry, let source):
                reasons.append(
                    .revoked(
                        subject: certificate.displayName, serialNumber: certificate.openSSLSerial, reason: (entry.reason ?? .unspecified).description,
                        revokedAt: entry.revocationDate, source: source))
            case .unknown(let why):
                if policy.mode == .hard { reasons.append(.revocationStatusUnknown(subject: certificate.displayName, detail: why)) }
            }
        }
        return reasons
    }

    var observesTrustedPaths: Bool { true }

    /// Soft checking's unknown statuses as notes; the window in which the sources that said "good" are current.
    func observe(_ path: CertificatePath, context: RuleContext) -> PathObservation {
        var observation = PathObservation()
        for position in positions(in: path) {
            switch status(of: path, at: position, time: context.evaluationTime) {
            case .good(let evidence):
                // Any one of these sources vouches for the certificate: the widest of their windows.
                guard let from = evidence.map(\.window.lowerBound).min(), let until = evidence.map(\.window.upperBound).max() else { continue }
                observation.narrowValidity(to: from <= until ? from...until : from...from)
            case .unknown(let why) where policy.mode == .soft:
                observation.notes.append(
                    "the revocation status of \(path.certificates[position].displayName) is unknown (allowed: revocation checking is soft): \(why)")
                observation.allowedFailures.append(.revocationStatusUnknown(subject: path.certificates[position].displayName, detail: why))
            default:
                continue
            }
        }
        return observation
    }

    /// The positions checked (``RevocationPolicy/checkedPositions(in:)``).
    func positions(in path: CertificatePath) -> [Int] {
        policy.positions(in: path.certificates)
    }

    /// The certificate's status from every source: revoked if any usable source says so, else good if any does, else
    /// unknown with each source's reason (``RevocationPolicy``, "When both sources speak").
    func status(of path: CertificatePath, at position: Int, time: Date) -> Status {
        var evidence: [Evidence] = []
        var problems: [String] = []
        switch ocspStatus(of: path, at: position, time: time) {
        case .revoked(let entry, let source)?: return .revoked(entry, source: source)
        case .good(let found)?: evidence += found
        case .unknown(let why)?: problems.append(why)
        case nil: break
        }
        // A response vouched for it and no CRL could say otherwise: nothing more to examine (or explain).
        if !evidence.isEmpty && !hasCRLs(issuedBy: path.certificates[position].issuer) { return .good(evidence) }
        switch crlStatus(of: path, at: position, time: time) {
        case .revoked(let entry, let source): return .revoked(entry, source: source)
        case .good(let found): evidence += found
        case .unknown(let why): problems.append(why)
        }
        return evidence.isEmpty ? .unknown(problems.joined(separator: "; ")) : .good(evidence)
    }

    /// What the OCSP response kept for the certificate says; `nil` with no OCSP cache or nothing kept but a failure
    /// for a certificate without a responder.
    private func ocspStatus(of path: CertificatePath, at position: Int, time: Date) -> Status? {
        guard let cache = policy.ocspCache else { return nil }
        let certificate = path.certificates[position]
        let issuer = path.certificates[position + 1]
        guard let entry = cache.entry(for: certificate) else {
            return OCSPRequest.responderURIs(of: certificate).isEmpty ? nil : .unknown("no OCSP response was obtained")
        }
        let source = entry.responder.map { "OCSP responder \($0)" } ?? "OCSP response"
        let from = "the " + source
        guard let response = entry.response else { return .unknown("asking \(from) failed: \(entry.failure ?? "no response")") }
        let pin = path.facts[position + 1].spkiPin
        let verdict = response.verdict(for: certificate, issuer: issuer, at: time, nonce: entry.nonce) {
            switch signers.signer(of: response, issuer: issuer, pin: pin) {
            case .failure(let problem): return problem.text
            case .success(let signer):
                return signer.notValidBefore <= time && time <= signer.notValidAfter
                    ? nil : "its responder certificate \(signer.displayName) is not valid at the evaluation time"
            }
        }
        let failure = entry.failure.map { " (asking again failed: \($0))" } ?? ""
        switch verdict {
        case .good(let thisUpdate, let validUntil):
            return .good([.ocsp(source: source, thisUpdate: thisUpdate, validUntil: validUntil)])
        case .revoked(let at, let reason, let thisUpdate):
            let entry = CertificateRevocationList.Entry(serialNumber: Array(certificate.serialNumber.bytes), revocationDate: at, reason: reason)
            return .revoked(entry, source: "\(source), response of \(RFC3339.string(thisUpdate))")
        case .unknown(let why):
            return .unknown("\(from) gave no usable answer: \(why)\(failure)")
        }
    }

    /// Whether any CRL, given or cached, is issued under `issuer`.
    private func hasCRLs(issuedBy issuer: DistinguishedName) -> Bool {
        !(crls[issuer] ?? []).isEmpty || !(policy.cache?.crls(issuedBy: issuer) ?? []).isEmpty
    }

    private func crlStatus(of path: CertificatePath, at position: Int, time: Date) -> Status {
        let certificate = path.certificates[position]
        let issuer = path.certificates[position + 1]
        let candidates = (crls[certificate.issuer] ?? []) + (policy.cache?.crls(issuedBy: certificate.issuer) ?? [])
        guard !candidates.isEmpty else {
            return .unknown("no CRL issued by \(certificate.issuer) was given" + (policy.cache.map { fetchFailures(certificate, $0) } ?? ""))
        }
        // The certificate's distribution points, read once for every candidate CRL's scope check.
        let points: Result<CRLDistributionPoints?, CertificateRevocationList.ParseError>
        do {
            points = .success(try CRLDistributionPoints(certificate))
        } catch {
            points = .failure(error)
        }
        var problems: [String] = []
        var covering: [CertificateRevocationList] = []
        for crl in candidates {
            if let problem = unusable(crl, for: certificate, points: points, issuer: issuer, issuerFacts: path.facts[position + 1], time: time) {
                problems.append("the CRL issued at \(RFC3339.string(crl.thisUpdate)) is not used: \(problem)")
                continue
            }
            if let entry = crl.entry(for: certificate), entry.reason != .removeFromCRL {
                return .revoked(entry, source: "CRL issued by \(crl.issuer) at \(RFC3339.string(crl.thisUpdate))")
            }
            if crl.issuingDistributionPoint?.onlySomeReasons == true {
                problems.append("the CRL issued at \(RFC3339.string(crl.thisUpdate)) covers only some revocation reasons")
            } else {
                covering.append(crl)
            }
        }
        return covering.isEmpty ? .unknown(problems.joined(separator: "; ")) : .good(covering.map(Evidence.crl))
    }

    /// " or fetched", and why fetching from each of the certificate's distribution points failed, as the cache recorded.
    private func fetchFailures(_ certificate: Certificate, _ cache: CRLCache) -> String {
        let uris = CRLDistributionPoints.fetchableURIs(of: certificate)
        let failures = uris.compactMap { uri in cache.entry(for: uri)?.failure.map { "fetching \(uri) failed: \($0)" } }
        if uris.isEmpty { return " or fetched (the certificate names no http or https CRL distribution point)" }
        return " or fetched" + (failures.isEmpty ? "" : " (" + failures.joined(separator: "; ") + ")")
    }

    /// Why `crl` may not decide `certificate`'s status, or `nil` when it may.
    private func unusable(
        _ crl: CertificateRevocationList, for certificate: Certificate, points: Result<CRLDistributionPoints?, CertificateRevocationList.ParseError>,
        issuer: Certificate, issuerFacts: CertificateFacts, time: Date
    ) -> String? {
        if let reason = crl.unusableReasons.first { return reason }
        if crl.thisUpdate > time { return "it was issued after the evaluation time (thisUpdate \(RFC3339.string(crl.thisUpdate)))" }
        if let next = crl.nextUpdate, next < time { return "it is stale: its nextUpdate \(RFC3339.string(next)) has passed" }
        switch Result(catching: { try issuer.extensions.keyUsage }) {
        case .success(let usage?) where !usage.cRLSign:
            return "its issuer \(issuer.displayName) has a keyUsage without cRLSign (RFC 5280 §4.2.1.3)"
        case .failure:
            return "its issuer \(issuer.displayName) has a malformed keyUsage"
        default:
            break
        }
        if let scope = scopeProblem(crl, certificate, points: points) { return scope }
        guard signatures.verified(crl, by: issuer, pin: issuerFacts.spkiPin) else {
            return "it is not signed by the key of \(issuer.displayName)"
        }
        return nil
    }

    /// Whether the CRL's Issuing Distribution Point (RFC 5280 §5.2.5, §6.3.3 (b)(2)) and the certificate's
    /// CRL Distribution Points (§6.3.3 (b)(1)) put the certificate in this direct CRL's scope.
    private func scopeProblem(
        _ crl: CertificateRevocationList, _ certificate: Certificate, points parsed: Result<CRLDistributionPoints?, CertificateRevocationList.ParseError>
    ) -> String? {
        guard case .success(let points) = parsed else { return "the certificate's CRL Distribution Points extension is malformed" }
        if let points, points.points.allSatisfy(\.hasCRLIssuer) {
            return "the certificate's CRLs are issued by another CRL issuer (indirect CRLs are not supported)"
        }
        guard let scope = crl.issuingDistributionPoint else { return nil }
        let isCA = certificate.isCertificateAuthority
        if scope.onlyContainsUserCerts && isCA { return "it covers end-entity certificates only" }
        if scope.onlyContainsCACerts && !isCA { return "it covers CA certificates only" }
        if scope.onlyContainsAttributeCerts { return "it covers attribute certificates only" }
        if scope.hasRelativeName { return "its distribution point is named relative to its issuer (not supported)" }
        if !scope.fullNames.isEmpty {
            let named = Set((points?.points ?? []).filter { !$0.hasCRLIssuer }.flatMap(\.fullNames))
            if !scope.fullNames.contains(where: named.contains) {
                return "it is the CRL of a distribution point the certificate does not name"
            }
        }
        return nil
    }
}

/// Remembers which (CRL, issuer key) pairs verified, bounded.
private final class SignatureMemo: @unchecked Sendable {
    /// The CRL by identity, not by its bytes. The key holds the CRL, so its identity cannot be reused by another
    /// while the entry exists (CRLs from a ``CRLCache`` come and go).
    private struct Key: Hashable {
        let crl: CertificateRevocationList
        let pin: SPKIPin
        static func == (lhs: Key, rhs: Key) -> Bool { lhs.crl.identity == rhs.crl.identity && lhs.pin == rhs.pin }
        func hash(into hasher: inout Hasher) {
            hasher.combine(crl.identity)
            hasher.combine(pin)
        }
    }
    private let lock = Lock()
    private var results: [Key: Bool] = [:]

    func verified(_ crl: CertificateRevocationList, by issuer: Certificate, pin: SPKIPin) -> Bool {
        let key = Key(crl: crl, pin: pin)
        if let known = lock.withLock({ results[key] }) { return known }
        let valid = crl.isSigned(by: issuer.publicKey)
        lock.withLock {
            if results.count >= 1024 { results.removeAll(keepingCapacity: true) }
            results[key] = valid
        }
        return valid
    }
}

/// Remembers who signed which OCSP response for which issuer key, bounded.
private final class OCSPSignerMemo: @unchecked Sendable {
    private struct Key: Hashable {
        let signed: ArraySlice<UInt8>
        let signature: [UInt8]
        let pin: SPKIPin
    }
    private let lock = Lock()
    private var results: [Key: Result<Certificate, OCSPResponse.SignatureProblem>] = [:]

    func signer(of response: OCSPResponse, issuer: Certificate, pin: SPKIPin) -> Result<Certificate, OCSPResponse.SignatureProblem> {
        // The whole signed part, not just the signature: a replayed signature over altered bytes must be verified anew.
        let key = Key(signed: response.tbsBytes, signature: response.signature, pin: pin)
        if let known = lock.withLock({ results[key] }) { return known }
        let result = response.signer(issuer: issuer)
        lock.withLock {
            if results.count >= 1024 { results.removeAll(keepingCapacity: true) }
            results[key] = result
        }
        return result
    }
}

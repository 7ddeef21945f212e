import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// AFNetworking's `AFSecurityPolicy`, with its semantics kept exactly — except where they
/// are unsafe, where this type is safe and says so.
///
/// `evaluate(_:forDomain:)` follows `-evaluateServerTrust:forDomain:` (AFNetworking 4):
/// 1. A domain cannot be validated for an invalid certificate without pinning: with a domain,
///    `allowInvalidCertificates` and `validatesDomainName`, pinning mode `.none` or no pinned
///    certificates → refused.
/// 2. The name is checked (TLS-server policy) when `validatesDomainName` and a domain is given;
///    otherwise the basic X.509 policy is used.
/// 3. Mode `.none`: trusted if `allowInvalidCertificates`, else if the chain validates.
/// 4. Other modes: without `allowInvalidCertificates` the chain must first validate against the
///    system anchors.
/// 5. `.certificate`: the pinned certificates become the only anchors and the chain must
///    validate again — to one of them.
/// 6. `.publicKey`: a pinned public key must be on the path.
///
/// **Safer than AFNetworking:** AFNetworking's public-key mode tests whether *any*
/// presented certificate has a pinned key, so with `allowInvalidCertificates` an attacker can
/// present its own leaf followed by the (public) pinned certificate. Here the pinned key must
/// be on a path the leaf actually chains to by signatures: with `allowInvalidCertificates`,
/// dates and names are not checked (as in AFNetworking), but the linkage is. Without it, the
/// pin is checked on the validated path only.
public struct SecurityPolicy: Sendable, Hashable {
    /// How the server is pinned (AFNetworking's `SSLPinningMode`).
    public var pinningMode: PinningMode
    /// Certificates to pin against (AFNetworking's `pinnedCertificates`, DER).
    public var pinnedCertificates: [Certificate]
    /// Accept invalid or expired certificates (and, in mode `.none`, anything at all). Defaults to `false`.
    public var allowInvalidCertificates: Bool
    /// Check the domain name in the certificate. Defaults to `true`.
    public var validatesDomainName: Bool
    /// The anchors AFNetworking's "system trust" means; the system roots by default.
    public var systemAnchors: TrustAnchors
    /// Minimums and limits applied on every path (key sizes, algorithms, depth).
    public var validationPolicy: ValidationPolicy

    /// AFNetworking's `+defaultPolicy`: no pinning, no invalid certificates, names validated.
    public static let `default` = SecurityPolicy(pinningMode: .none)

    /// Creates a policy; the defaults match AFNetworking's (no invalid certificates, names validated).
    public init(
        pinningMode: PinningMode, pinnedCertificates: [Certificate] = [], allowInvalidCertificates: Bool = false,
        validatesDomainName: Bool = true, systemAnchors: TrustAnchors = .system, validationPolicy: ValidationPolicy = .webPKI
    ) {
        self.pinningMode = pinningMode
        self.pinnedCertificates = pinnedCertificates
        self.allowInvalidCertificates = allowInvalidCertificates
        self.validatesDomainName = validatesDomainName
        self.systemAnchors = systemAnchors
        self.validationPolicy = validationPolicy
    }

    /// The public keys of the pinned certificates (AFNetworking derives them the same way).
    public var pinnedPublicKeys: Set<SPKIPin> { Set(pinnedCertificates.map(\.spkiPin)) }

    /// AFNetworking's `+certificatesInBundle:` — every `.cer/.crt/.der/.pem` file in a folder.
    public static func certificates(inDirectory path: String) throws(CertificateLoadingError) -> [Certificate] {
        try CertificateSource.certificates(inDirectory: path)
    }

    var summary: TrustDecision.Policy {
        .securityPolicy(
            mode: pinningMode, pinnedCertificates: pinnedCertificates.count, allowsInvalidCertificates: allowInvalidCertificates,
            validatesDomainName: validatesDomainName)
    }

    /// `-evaluateServerTrust:forDomain:` on a presented chain (leaf first).
    public func evaluate(_ chain: [Certificate], forDomain domain: String?, at time: Date = Date()) async -> TrustDecision {
        await evaluate(chain, fetchedIntermediates: [], forDomain: domain, at: time)
    }

    /// ``evaluate(_:forDomain:at:)`` with intermediates fetched for path building (``ServerTrust/fetchedIntermediates``):
    /// candidates for the path, never anchors nor pinned certificates' stand-ins.
    func evaluate(_ chain: [Certificate], fetchedIntermediates: [Certificate], forDomain domain: String?, at time: Date) async -> TrustDecision {
        var peerName: PeerName?
        var trust = ServerTrust(presentedChain: chain, peerName: nil, evaluationTime: time)
        trust.fetchedIntermediates = fetchedIntermediates
        if let domain {
            do {
                peerName = try PeerName(host: domain)
            } catch {
                return .refused([.nameMismatch(expected: domain, presented: [])], trust: trust, policy: summary)
            }
        }
        trust.peerName = validatesDomainName ? peerName : nil

        // (1) "a domain cannot be validated for an invalid certificate without pinning".
        if domain != nil && allowInvalidCertificates && validatesDomainName && (pinningMode == .none || pinnedCertificates.isEmpty) {
            return .refused(
                [
                    .pinningRequired(
                        "validating the domain of an invalid certificate needs pinning: set a pinning mode and pinned certificates, or do not allow invalid certificates"
                    )
                ], trust: trust, policy: summary)
        }

        // (2) TLS-server policy with the domain, or basic X.509.
        var policy = validationPolicy
        if validatesDomainName {
            policy.purpose = .tlsServer
            policy.checksPeerName = trust.peerName != nil
        } else {
            policy.purpose = .basicX509
        }

        func validate(_ anchors: TrustAnchors, _ policy: ValidationPolicy) async -> TrustDecision {
            await PathValidator(anchors: anchors, policy: policy, name: summary).evaluate(trust)
        }

        switch pinningMode {
        case .none:
            // (3)
            let decision = await validate(systemAnchors, policy)
            if decision.isTrusted || !allowInvalidCertificates { return decision }
            return decision.overridden(
                by: .allowInvalidCertificates, isTrusted: true,
                notes: ["accepted without validation (allowInvalidCertificates, no pinning)"] + decision.reasons.map { "ignored: \($0)" })

        case .certificate:
            guard !pinnedCertificates.isEmpty else {
                return .refused([.pinningRequired("certificate pinning with no pinned certificates trusts nothing")], trust: trust, policy: summary)
            }
            // (4)
            if !allowInvalidCertificates {
                let base = await validate(systemAnchors, policy)
                if !base.isTrusted { return base }
            }
            // (5) pinned certificates as the only anchors; one of them on the path.
            var pinnedPolicy = policy
            pinnedPolicy.requiredCertificates = pinnedCertificates
            return await validate(.only(pinnedCertificates), pinnedPolicy)

        case .publicKey:
            let pins = pinnedPublicKeys
            guard !pins.isEmpty else {
                return .refused(
                    [.pinningRequired("public-key pinning with no pinned certificates trusts nothing")], trust: trust, policy: summary, expectedPins: [])
            }
            var pinnedPolicy = policy
            pinnedPolicy.pins = pins
            if !allowInvalidCertificates {
                // (4) + (6): a valid path with a pinned key on it.
                return await validate(systemAnchors, pinnedPolicy)
            }
            // (6) with invalid certificates allowed: dates, names and usages are not checked, but
            // the leaf must chain by signatures to a certificate with a pinned key.
            let keyHolders = chain.filter { pins.contains($0.spkiPin) }
            pinnedPolicy.checksValidity = false
            pinnedPolicy.purpose = .basicX509
            pinnedPolicy.enforcesCertificateProfile = false
            return await validate(.only(pinnedCertificates + keyHolders), pinnedPolicy)
        }
    }
}

extension SecurityPolicy: Codable {
    enum CodingKeys: String, CodingKey {
        case pinningMode, pinnedCertificates, allowInvalidCertificates, validatesDomainName
    }

    /// Like AFNetworking's NSSecureCoding: the mode, the flags and the pinned certificates
    /// (base64 DER). Anchors and minimums are not encoded; a decoded policy uses the defaults.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(pinningMode, forKey: .pinningMode)
        try container.encode(pinnedCertificates.map { Data($0.derBytes).base64EncodedString() }, forKey: .pinnedCertificates)
        try container.encode(allowInvalidCertificates, forKey: .allowInvalidCertificates)
        try container.encode(validatesDomainName, forKey: .validatesDomainName)
    }

    /// Decodes the mode, the flags and the pinned certificates; anchors and minimums take their defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let encoded = try container.decode([String].self, forKey: .pinnedCertificates)
        var certificates: [Certificate] = []
        for (index, text) in encoded.enumerated() {
            guard let der = Data(base64Encoded: text), let certificate = try? Certificate(derEncoded: Array(der)) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .pinnedCertificates, in: container, debugDescription: "pinned certificate \(index) is not base64 DER")
            }
            certificates.append(certificate)
        }
        self.init(
            pinningMode: try container.decode(PinningMode.self, forKey: .pinningMode),
            pinnedCertificates: certificates,
            allowInvalidCertificates: try container.decode(Bool.self, forKey: .allowInvalidCertificates),
            validatesDomainName: try container.decode(Bool.self, forKey: .validatesDomainName))
    }
}

/// A policy is an evaluator like any other: it judges the presented chain for the trust's peer name at
/// its evaluation time (whether the name is checked is `validatesDomainName`'s, as in AFNetworking).
extension SecurityPolicy: TrustEvaluator {
    public func evaluate(_ trust: ServerTrust) async -> TrustDecision {
        await evaluate(
            trust.presentedChain, fetchedIntermediates: trust.fetchedIntermediates, forDomain: trust.peerName?.description, at: trust.evaluationTime)
    }
}

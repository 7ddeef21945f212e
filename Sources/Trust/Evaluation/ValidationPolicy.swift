import X509

/// The rules a path must satisfy, secure by default (a modern Web-PKI profile).
///
/// ``webPKI`` (the default) checks: validity (exactly), basic constraints and path length,
/// key usage, extended key usage `serverAuth` (leaf, and not excluded by any CA), name
/// constraints (with a work budget), the peer name in the subjectAltName only (RFC 6125
/// wildcards, none on a public suffix), SHA-256+ signatures, RSA ≥ 2048 / EC ≥ 256 keys,
/// at most 8 intermediates, and a bound on path-building work.
public struct ValidationPolicy: Sendable, Hashable {
    /// What the certificate is for.
    public enum Purpose: Sendable, Hashable {
        /// A TLS server: EKU serverAuth, and the peer name is checked (see ``checksPeerName``).
        case tlsServer
        /// A TLS client: EKU clientAuth; no peer name.
        case tlsClient
        /// Plain X.509 path validation (Apple's "basic X.509" policy): no EKU, no name.
        case basicX509
    }

    /// What the certificate is for; decides the EKU and name checks.
    public var purpose: Purpose
    /// For `.tlsServer`: whether the peer name must match. Turn off only when something
    /// else binds the certificate to the peer (a pinned certificate, say).
    public var checksPeerName: Bool
    /// Whether validity dates are checked (off only for AFNetworking's `allowInvalidCertificates`).
    public var checksValidity: Bool
    /// Whether the anchor's own dates are checked.
    public var checksAnchorValidity: Bool
    /// Refuse a leaf without an extendedKeyUsage extension (CA/B Forum Baseline Requirements).
    public var requiresExtendedKeyUsageInLeaf: Bool
    /// Refuse a CA certificate as the leaf.
    public var forbidsCAAsLeaf: Bool
    /// Enforce the structural rules of the Web-PKI certificate profile: key identifiers, serial
    /// numbers, critical basicConstraints in CAs, SAN criticality, well-formed AIA.
    public var enforcesCertificateProfile: Bool
    /// The smallest RSA key accepted, in bits.
    public var minimumRSAKeyBits: Int
    /// The smallest EC key accepted, in bits.
    public var minimumECKeyBits: Int
    /// Whether SHA-1 signatures (sha1WithRSAEncryption) are accepted.
    public var allowsSHA1Signatures: Bool
    /// The most intermediates (not counting self-issued ones) between leaf and anchor.
    public var maximumIntermediates: Int
    /// The most candidate-issuer signature checks path building may do.
    public var maximumSignatureChecks: Int
    /// The most name-versus-constraint comparisons.
    public var maximumNameConstraintChecks: Int
    /// Public suffixes on which wildcards are refused; `nil` uses the system list when installed.
    public var publicSuffixes: PublicSuffixList?
    /// SPKI pins, one of which must be on the validated path; empty = no pinning.
    public var pins: Set<SPKIPin>
    /// Certificates one of which must be on the validated path; empty = no requirement.
    public var requiredCertificates: [Certificate]
    /// Revocation checking (off by default) and the CRLs it decides from.
    public var revocation: RevocationPolicy
    /// Certificate Transparency (off by default): SCTs required of leaves that chain to system roots.
    public var certificateTransparency: CertificateTransparencyPolicy = .off

    /// Creates a policy; the defaults are the Web-PKI profile.
    public init(
        purpose: Purpose = .tlsServer,
        checksPeerName: Bool = true,
        checksValidity: Bool = true,
        checksAnchorValidity: Bool = true,
        requiresExtendedKeyUsageInLeaf: Bool = false,
        forbidsCAAsLeaf: Bool = true,
        enforcesCertificateProfile: Bool = true,
        minimumRSAKeyBits: Int = 2048,
        minimumECKeyBits: Int = 256,
        allowsSHA1Signatures: Bool = false,
        maximumIntermediates: Int = 8,
        maximumSignatureChecks: Int = 1000,
        maximumNameConstraintChecks: Int = 1 << 20,
        publicSuffixes: PublicSuffixList? = nil,
        pins: Set<SPKIPin> = [],
        requiredCertificates: [Certificate] = [],
        revocation: RevocationPolicy = .off
    ) {
        self.purpose = purpose
        self.checksPeerName = checksPeerName
        self.checksValidity = checksValidity
        self.checksAnchorValidity = checksAnchorValidity
        self.requiresExtendedKeyUsageInLeaf = requiresExtendedKeyUsageInLeaf
        self.forbidsCAAsLeaf = forbidsCAAsLeaf
        self.enforcesCertificateProfile = enforcesCertificateProfile
        self.minimumRSAKeyBits = minimumRSAKeyBits
        self.minimumECKeyBits = minimumECKeyBits
        self.allowsSHA1Signatures = allowsSHA1Signatures
        self.maximumIntermediates = maximumIntermediates
        self.maximumSignatureChecks = maximumSignatureChecks
        self.maximumNameConstraintChecks = maximumNameConstraintChecks
        self.publicSuffixes = publicSuffixes
        self.pins = pins
        self.requiredCertificates = requiredCertificates
        self.revocation = revocation
    }

    /// The default: a TLS server under the modern Web-PKI profile.
    public static let webPKI = ValidationPolicy()

    /// Path validation without EKU or name checks.
    public static let basicX509 = ValidationPolicy(purpose: .basicX509)

    /// The rules this policy runs on each candidate path, in order.
    package func rules() -> [any PathRule] {
        var rules: [any PathRule] = []
        if checksValidity { rules.append(ValidityRule(checksAnchor: checksAnchorValidity)) }
        rules.append(BasicConstraintsRule(forbidsCAAsLeaf: forbidsCAAsLeaf && purpose != .basicX509))
        rules.append(KeyUsageRule())
        switch purpose {
        case .tlsServer:
            rules.append(ExtendedKeyUsageRule(purpose: .serverAuth, requiresExtensionInLeaf: requiresExtendedKeyUsageInLeaf))
        case .tlsClient:
            rules.append(ExtendedKeyUsageRule(purpose: .clientAuth, requiresExtensionInLeaf: requiresExtendedKeyUsageInLeaf))
        case .basicX509:
            rules.append(ExtendedKeyUsageRule(purpose: nil))
        }
        rules.append(NameConstraintsRule(maximumChecks: maximumNameConstraintChecks))
        if purpose == .tlsServer && checksPeerName {
            rules.append(PeerNameRule(matcher: HostnameMatcher(publicSuffixes: publicSuffixes ?? PublicSuffixList.shared)))
        }
        rules.append(SignatureAlgorithmRule(allowsSHA1: allowsSHA1Signatures))
        rules.append(KeyStrengthRule(minimumRSABits: minimumRSAKeyBits, minimumECBits: minimumECKeyBits))
        rules.append(PathDepthRule(maximumIntermediates: maximumIntermediates))
        if enforcesCertificateProfile {
            rules.append(CertificateProfileRule())
            rules.append(KeyIdentifierRule())
        }
        if !pins.isEmpty { rules.append(PinRule(pins: pins)) }
        if !requiredCertificates.isEmpty { rules.append(PinnedCertificateRule(certificates: requiredCertificates)) }
        if revocation.mode != .off { rules.append(RevocationRule(policy: revocation)) }
        return rules
    }
}

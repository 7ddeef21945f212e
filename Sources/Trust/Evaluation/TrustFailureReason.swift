#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One reason a chain was not trusted. Reasons are data: switch on them; the
/// `description` is for people and says what happened, ``explanation`` adds what usually fixes it.
/// One reason a chain was not trusted: a value whose ``kind`` says what failed, whose ``description`` says so in
/// words (naming the certificates) and whose ``explanation`` adds what usually fixes it.
///
/// New kinds of reasons come in minor versions, and adding one breaks no client: compare ``kind`` with a member of
/// ``Kind`` (`reason.kind == .pinMismatch`), or `switch` on it with a `default:`.
public struct TrustFailureReason: Hashable, Sendable, CustomStringConvertible {
    /// The reason with its data (names, dates, pins), for this package's code.
    package let detail: Detail

    package init(_ detail: Detail) { self.detail = detail }

    /// What kind of reason this is.
    public var kind: Kind { detail.kind }

    /// A short stable identifier, for JSON output and scripts: ``Kind/code`` of ``kind``.
    public var code: String { kind.code }

    /// What happened, in words, safe to show: the names and texts in it that a certificate, a CRL or an
    /// OCSP responder chose are escaped (``DisplayText``), never a terminal's or a log's control characters.
    /// The likely fix is in ``explanation``.
    public var description: String { DisplayText.escaped(detail.sentence) }

    /// A refusal by the application, in its own words: what a ``TrustEvaluator`` of the application's returns
    /// when it refuses a chain for a reason of its own.
    public static func refusedByApplication(_ why: String) -> Self { Self(.refusedByApplication(why)) }

    // The reasons this package makes, by the names of their details.
    package static func noPathToTrustedAnchor(_ value: NoPathDetail) -> Self { Self(.noPathToTrustedAnchor(value)) }
    package static func expired(subject: String, notAfter: Date, at: Date) -> Self { Self(.expired(subject: subject, notAfter: notAfter, at: at)) }
    package static func notYetValid(subject: String, notBefore: Date, at: Date) -> Self { Self(.notYetValid(subject: subject, notBefore: notBefore, at: at)) }
    package static func nameMismatch(expected: String, presented: [String]) -> Self { Self(.nameMismatch(expected: expected, presented: presented)) }
    package static func missingSubjectAlternativeName(subject: String) -> Self { Self(.missingSubjectAlternativeName(subject: subject)) }
    package static func missingExtendedKeyUsage(subject: String, required: String) -> Self {
        Self(.missingExtendedKeyUsage(subject: subject, required: required))
    }
    package static func extendedKeyUsageExcludedByIssuer(subject: String, required: String) -> Self {
        Self(.extendedKeyUsageExcludedByIssuer(subject: subject, required: required))
    }
    package static func weakKey(subject: String, key: String, minimum: String) -> Self { Self(.weakKey(subject: subject, key: key, minimum: minimum)) }
    package static func weakSignatureAlgorithm(subject: String, algorithm: String) -> Self {
        Self(.weakSignatureAlgorithm(subject: subject, algorithm: algorithm))
    }
    package static func pinMismatch(seen: [SPKIPin], expected: [SPKIPin]) -> Self { Self(.pinMismatch(seen: seen, expected: expected)) }
    package static func pinnedCertificateNotInPath(pinned: [String]) -> Self { Self(.pinnedCertificateNotInPath(pinned: pinned)) }
    package static func pinningRequired(_ value: String) -> Self { Self(.pinningRequired(value)) }
    package static func malformedCertificate(subject: String, detail: String) -> Self { Self(.malformedCertificate(subject: subject, detail: detail)) }
    package static func issuerNotCertificateAuthority(subject: String) -> Self { Self(.issuerNotCertificateAuthority(subject: subject)) }
    package static func pathLengthConstraintViolated(subject: String, maxPathLength: Int) -> Self {
        Self(.pathLengthConstraintViolated(subject: subject, maxPathLength: maxPathLength))
    }
    package static func leafIsCertificateAuthority(subject: String) -> Self { Self(.leafIsCertificateAuthority(subject: subject)) }
    package static func issuerKeyUsageForbidsCertificateSigning(subject: String) -> Self { Self(.issuerKeyUsageForbidsCertificateSigning(subject: subject)) }
    package static func leafKeyUsageInvalid(subject: String, detail: String) -> Self { Self(.leafKeyUsageInvalid(subject: subject, detail: detail)) }
    package static func unhandledCriticalExtension(subject: String, oid: String) -> Self { Self(.unhandledCriticalExtension(subject: subject, oid: oid)) }
    package static func nameConstraintViolation(subject: String, name: String, constrainedBy: String) -> Self {
        Self(.nameConstraintViolation(subject: subject, name: name, constrainedBy: constrainedBy))
    }
    package static func pathTooLong(intermediates: Int, maximum: Int) -> Self { Self(.pathTooLong(intermediates: intermediates, maximum: maximum)) }
    package static func pathTooCostly(_ value: String) -> Self { Self(.pathTooCostly(value)) }
    package static let emptyChain = Self(.emptyChain)
    package static let peerNameRequired = Self(.peerNameRequired)
    package static func revoked(subject: String, serialNumber: String, reason: String, revokedAt: Date, source: String) -> Self {
        Self(.revoked(subject: subject, serialNumber: serialNumber, reason: reason, revokedAt: revokedAt, source: source))
    }
    package static func revocationStatusUnknown(subject: String, detail: String) -> Self { Self(.revocationStatusUnknown(subject: subject, detail: detail)) }
    package static func certificateTransparencyPolicyNotMet(
        subject: String, validSCTs: Int, requiredSCTs: Int, operators: Int, requiredOperators: Int, invalidSCTs: Int, unknownLogSCTs: Int, detail: String
    ) -> Self {
        Self(
            .certificateTransparencyPolicyNotMet(
                subject: subject, validSCTs: validSCTs, requiredSCTs: requiredSCTs, operators: operators, requiredOperators: requiredOperators,
                invalidSCTs: invalidSCTs, unknownLogSCTs: unknownLogSCTs, detail: detail))
    }
    package static func svidURICount(subject: String, uris: [String]) -> Self { Self(.svidURICount(subject: subject, uris: uris)) }
    package static func svidInvalidSPIFFEID(subject: String, error: SPIFFEIDError) -> Self { Self(.svidInvalidSPIFFEID(subject: subject, error: error)) }
    package static func svidRequirementNotMet(subject: String, spiffeID: String, requirement: SVIDRequirement) -> Self {
        Self(.svidRequirementNotMet(subject: subject, spiffeID: spiffeID, requirement: requirement))
    }
    package static func spiffeTrustDomainNotTrusted(spiffeID: String, trustDomain: String, anchor: String?) -> Self {
        Self(.spiffeTrustDomainNotTrusted(spiffeID: spiffeID, trustDomain: trustDomain, anchor: anchor))
    }
    package static func spiffeIDNotAllowed(spiffeID: String, allowed: [String]) -> Self { Self(.spiffeIDNotAllowed(spiffeID: spiffeID, allowed: allowed)) }
    package static func rootDistrusted(root: String, label: String, rule: RootDistrustRule) -> Self {
        Self(.rootDistrusted(root: root, label: label, rule: rule))
    }
}

/// Which of NSS's rules refused a public root (see ``RootStore``).
package enum RootDistrustRule: Hashable, Sendable {
    /// NSS lists the root but not as a trust anchor for TLS servers (`CKT_NSS_MUST_VERIFY_TRUST`).
    case notTrustedForServers
    /// NSS explicitly distrusts the certificate (`CKT_NSS_NOT_TRUSTED`).
    case distrusted
    /// The end-entity certificate was issued (its `notBefore`) after the root's server distrust-after date.
    case issuedAfterDistrustDate(distrustAfter: Date, leafNotBefore: Date)
}

extension TrustFailureReason {
    /// What kind of reason: one of the static members, compared with `==` or matched in a `switch` (with a
    /// `default:`, since kinds are added in minor versions).
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The stable identifier (`pin-mismatch`), as `--json` and scripts see it.
        public let code: String

        private init(_ code: String) { self.code = code }

        /// The stable identifier, ``code``.
        public var description: String { code }

        /// No path could be built from the leaf to a trusted anchor.
        public static let noPathToTrustedAnchor = Kind("no-path-to-trusted-anchor")
        /// A certificate on the path had expired at the evaluation time.
        public static let expired = Kind("expired")
        /// A certificate on the path was not yet valid at the evaluation time.
        public static let notYetValid = Kind("not-yet-valid")
        /// The leaf does not hold the expected name; `presented` lists the names it does hold.
        public static let nameMismatch = Kind("name-mismatch")
        /// The leaf has no subjectAltName extension; the subject CN is never used as a fallback.
        public static let missingSubjectAlternativeName = Kind("missing-subject-alt-name")
        /// The leaf's extended key usage does not allow the required purpose, or has none while one is required.
        public static let missingExtendedKeyUsage = Kind("missing-extended-key-usage")
        /// A CA on the path restricts extended key usage to purposes that exclude the required one.
        public static let extendedKeyUsageExcludedByIssuer = Kind("extended-key-usage-excluded-by-issuer")
        /// A key below the minimum size, or of an unsupported type.
        public static let weakKey = Kind("weak-key")
        /// A certificate signed with a refused algorithm (SHA-1, MD5, unknown).
        public static let weakSignatureAlgorithm = Kind("weak-signature-algorithm")
        /// None of the certificates on the validated path has a pinned public key.
        public static let pinMismatch = Kind("pin-mismatch")
        /// None of the certificates on the path is one of the pinned certificates.
        public static let pinnedCertificateNotInPath = Kind("pinned-certificate-not-in-path")
        /// The configuration asks for something that needs pinning (e.g. an invalid certificate
        /// accepted for a domain) but no usable pins were given.
        public static let pinningRequired = Kind("pinning-required")
        /// A certificate could not be understood (a malformed extension, an unsupported critical extension…).
        public static let malformedCertificate = Kind("malformed-certificate")
        /// An issuing certificate on the path is not a CA (basicConstraints).
        public static let issuerNotCertificateAuthority = Kind("issuer-not-ca")
        /// A CA's pathLenConstraint is exceeded.
        public static let pathLengthConstraintViolated = Kind("path-length-constraint")
        /// The leaf is a CA certificate (not allowed for a server in the Web PKI profile).
        public static let leafIsCertificateAuthority = Kind("leaf-is-ca")
        /// An issuing certificate's keyUsage does not allow certificate signing.
        public static let issuerKeyUsageForbidsCertificateSigning = Kind("issuer-key-usage")
        /// The leaf's keyUsage does not allow the use the handshake needs.
        public static let leafKeyUsageInvalid = Kind("leaf-key-usage")
        /// A certificate carries a critical extension this validator does not process.
        public static let unhandledCriticalExtension = Kind("unhandled-critical-extension")
        /// A name on the path violates a CA's name constraints.
        public static let nameConstraintViolation = Kind("name-constraint-violation")
        /// More intermediates than the maximum depth allows.
        public static let pathTooLong = Kind("path-too-long")
        /// Path building or name-constraint checking exceeded its work budget (hostile input).
        public static let pathTooCostly = Kind("path-too-costly")
        /// No certificates were presented.
        public static let emptyChain = Kind("empty-chain")
        /// The policy needs a peer name and none was given.
        public static let peerNameRequired = Kind("peer-name-required")
        /// The application refused the server (a challenge handler cancelled or rejected it, or answered wrongly).
        public static let refusedByApplication = Kind("refused-by-application")
        /// A certificate on the path is revoked: `source` (a CRL, named by its issuer, or an OCSP responder) says so.
        public static let revoked = Kind("revoked")
        /// Under hard revocation checking, a certificate's revocation status could not be established.
        public static let revocationStatusUnknown = Kind("revocation-status-unknown")
        /// The leaf does not carry enough valid Signed Certificate Timestamps from distinct log operators (RFC 6962; the
        /// policy of ``CertificateTransparencyPolicy``): the counts found and required, and each SCT's finding in `detail`.
        public static let certificateTransparencyPolicyNotMet = Kind("ct-policy-not-met")
        /// The leaf is no X.509-SVID: it holds `uris.count` URI SANs, not exactly one (X509-SVID.md §2, §5.2).
        public static let svidURICount = Kind("svid-uri-count")
        /// The leaf's one URI SAN is not a valid SPIFFE ID (X509-SVID.md §5.2, SPIFFE-ID.md §2); `error` says why.
        public static let svidInvalidSPIFFEID = Kind("svid-invalid-spiffe-id")
        /// A certificate of an SVID path breaks a MUST of X509-SVID.md; `spiffeID` is the URI SAN it holds (may be empty).
        public static let svidRequirementNotMet = Kind("svid-requirement")
        /// The SVID's trust domain has no trusted bundle (`anchor` nil), or the path ends at `anchor`, an authority of
        /// another trust domain (SPIFFE-ID.md §3: an SVID is signed by an authority of its own trust domain).
        public static let spiffeTrustDomainNotTrusted = Kind("spiffe-trust-domain-not-trusted")
        /// The peer's SPIFFE ID is valid and trusted, but none of the allowed IDs, trust domains or path prefixes matches it.
        public static let spiffeIDNotAllowed = Kind("spiffe-id-not-allowed")
        /// The path ends at a public root that Mozilla's root store does not trust for this certificate: a root NSS
        /// lists without server trust, or one whose server distrust-after date is before the leaf's `notBefore`.
        public static let rootDistrusted = Kind("root-distrusted")
    }
}

extension TrustFailureReason {
    /// A reason with its data. Exhaustive inside this package, so every reason has its words and its fix.
    package enum Detail: Hashable, Sendable {
        /// No path could be built from the leaf to a trusted anchor.
        case noPathToTrustedAnchor(NoPathDetail)
        /// A certificate on the path had expired at the evaluation time.
        case expired(subject: String, notAfter: Date, at: Date)
        /// A certificate on the path was not yet valid at the evaluation time.
        case notYetValid(subject: String, notBefore: Date, at: Date)
        /// The leaf does not hold the expected name; `presented` lists the names it does hold.
        case nameMismatch(expected: String, presented: [String])
        /// The leaf has no subjectAltName extension; the subject CN is never used as a fallback.
        case missingSubjectAlternativeName(subject: String)
        /// The leaf's extended key usage does not allow the required purpose, or has none while one is required.
        case missingExtendedKeyUsage(subject: String, required: String)
        /// A CA on the path restricts extended key usage to purposes that exclude the required one.
        case extendedKeyUsageExcludedByIssuer(subject: String, required: String)
        /// A key below the minimum size, or of an unsupported type.
        case weakKey(subject: String, key: String, minimum: String)
        /// A certificate signed with a refused algorithm (SHA-1, MD5, unknown).
        case weakSignatureAlgorithm(subject: String, algorithm: String)
        /// None of the certificates on the validated path has a pinned public key.
        case pinMismatch(seen: [SPKIPin], expected: [SPKIPin])
        /// None of the certificates on the path is one of the pinned certificates.
        case pinnedCertificateNotInPath(pinned: [String])
        /// The configuration asks for something that needs pinning (e.g. an invalid certificate
        /// accepted for a domain) but no usable pins were given.
        case pinningRequired(String)
        /// A certificate could not be understood (a malformed extension, an unsupported critical extension…).
        case malformedCertificate(subject: String, detail: String)
        /// An issuing certificate on the path is not a CA (basicConstraints).
        case issuerNotCertificateAuthority(subject: String)
        /// A CA's pathLenConstraint is exceeded.
        case pathLengthConstraintViolated(subject: String, maxPathLength: Int)
        /// The leaf is a CA certificate (not allowed for a server in the Web PKI profile).
        case leafIsCertificateAuthority(subject: String)
        /// An issuing certificate's keyUsage does not allow certificate signing.
        case issuerKeyUsageForbidsCertificateSigning(subject: String)
        /// The leaf's keyUsage does not allow the use the handshake needs.
        case leafKeyUsageInvalid(subject: String, detail: String)
        /// A certificate carries a critical extension this validator does not process.
        case unhandledCriticalExtension(subject: String, oid: String)
        /// A name on the path violates a CA's name constraints.
        case nameConstraintViolation(subject: String, name: String, constrainedBy: String)
        /// More intermediates than the maximum depth allows.
        case pathTooLong(intermediates: Int, maximum: Int)
        /// Path building or name-constraint checking exceeded its work budget (hostile input).
        case pathTooCostly(String)
        /// No certificates were presented.
        case emptyChain
        /// The policy needs a peer name and none was given.
        case peerNameRequired
        /// The application refused the server (a challenge handler cancelled or rejected it, or answered wrongly).
        case refusedByApplication(String)
        /// A certificate on the path is revoked: `source` (a CRL, named by its issuer, or an OCSP responder) says so.
        case revoked(subject: String, serialNumber: String, reason: String, revokedAt: Date, source: String)
        /// Under hard revocation checking, a certificate's revocation status could not be established.
        case revocationStatusUnknown(subject: String, detail: String)
        /// The leaf does not carry enough valid Signed Certificate Timestamps from distinct log operators (RFC 6962; the
        /// policy of ``CertificateTransparencyPolicy``): the counts found and required, and each SCT's finding in `detail`.
        case certificateTransparencyPolicyNotMet(
            subject: String, validSCTs: Int, requiredSCTs: Int, operators: Int, requiredOperators: Int, invalidSCTs: Int, unknownLogSCTs: Int, detail: String)
        /// The leaf is no X.509-SVID: it holds `uris.count` URI SANs, not exactly one (X509-SVID.md §2, §5.2).
        case svidURICount(subject: String, uris: [String])
        /// The leaf's one URI SAN is not a valid SPIFFE ID (X509-SVID.md §5.2, SPIFFE-ID.md §2); `error` says why.
        case svidInvalidSPIFFEID(subject: String, error: SPIFFEIDError)
        /// A certificate of an SVID path breaks a MUST of X509-SVID.md; `spiffeID` is the URI SAN it holds (may be empty).
        case svidRequirementNotMet(subject: String, spiffeID: String, requirement: SVIDRequirement)
        /// The SVID's trust domain has no trusted bundle (`anchor` nil), or the path ends at `anchor`, an authority of
        /// another trust domain (SPIFFE-ID.md §3: an SVID is signed by an authority of its own trust domain).
        case spiffeTrustDomainNotTrusted(spiffeID: String, trustDomain: String, anchor: String?)
        /// The peer's SPIFFE ID is valid and trusted, but none of the allowed IDs, trust domains or path prefixes matches it.
        case spiffeIDNotAllowed(spiffeID: String, allowed: [String])
        /// The path ends at `root` (NSS's `label`), which NSS's `rule` refuses for this certificate.
        case rootDistrusted(root: String, label: String, rule: RootDistrustRule)

        /// What kind of reason this is.
        var kind: Kind {
            switch self {
            case .noPathToTrustedAnchor: return .noPathToTrustedAnchor
            case .expired: return .expired
            case .notYetValid: return .notYetValid
            case .nameMismatch: return .nameMismatch
            case .missingSubjectAlternativeName: return .missingSubjectAlternativeName
            case .missingExtendedKeyUsage: return .missingExtendedKeyUsage
            case .extendedKeyUsageExcludedByIssuer: return .extendedKeyUsageExcludedByIssuer
            case .weakKey: return .weakKey
            case .weakSignatureAlgorithm: return .weakSignatureAlgorithm
            case .pinMismatch: return .pinMismatch
            case .pinnedCertificateNotInPath: return .pinnedCertificateNotInPath
            case .pinningRequired: return .pinningRequired
            case .malformedCertificate: return .malformedCertificate
            case .issuerNotCertificateAuthority: return .issuerNotCertificateAuthority
            case .pathLengthConstraintViolated: return .pathLengthConstraintViolated
            case .leafIsCertificateAuthority: return .leafIsCertificateAuthority
            case .issuerKeyUsageForbidsCertificateSigning: return .issuerKeyUsageForbidsCertificateSigning
            case .leafKeyUsageInvalid: return .leafKeyUsageInvalid
            case .unhandledCriticalExtension: return .unhandledCriticalExtension
            case .nameConstraintViolation: return .nameConstraintViolation
            case .pathTooLong: return .pathTooLong
            case .pathTooCostly: return .pathTooCostly
            case .emptyChain: return .emptyChain
            case .peerNameRequired: return .peerNameRequired
            case .refusedByApplication: return .refusedByApplication
            case .revoked: return .revoked
            case .revocationStatusUnknown: return .revocationStatusUnknown
            case .certificateTransparencyPolicyNotMet: return .certificateTransparencyPolicyNotMet
            case .svidURICount: return .svidURICount
            case .svidInvalidSPIFFEID: return .svidInvalidSPIFFEID
            case .svidRequirementNotMet: return .svidRequirementNotMet
            case .spiffeTrustDomainNotTrusted: return .spiffeTrustDomainNotTrusted
            case .spiffeIDNotAllowed: return .spiffeIDNotAllowed
            case .rootDistrusted: return .rootDistrusted
            }
        }

        /// What happened, with every name as the certificate holds it (our own words hold no character that
        /// ``DisplayText`` escapes, so escaping the whole sentence escapes exactly the names).
        var sentence: String {
            switch self {
            case .noPathToTrustedAnchor(let detail):
                switch detail {
                case .selfSignedLeaf(let s):
                    return "the certificate \(s) is self-signed and not among the trusted anchors"
                case .untrustedRoot(let s):
                    return "the chain ends at the root \(s), which is not a trusted anchor"
                case .missingIssuer(let issuer, let of):
                    return
                        "no issuer \(issuer) for \(of) among the presented certificates or the anchors: either the server does not send its intermediate certificate, or \(issuer) is a CA you do not trust"
                case .issuerNotTrusted(let issuer, let of):
                    return "the chain ends at \(of), issued by \(issuer), which is not a trusted anchor"
                case .badSignature(let s):
                    return "the signature on \(s) does not verify with its issuer's key"
                case .everyCandidateFailed:
                    return "every candidate path to a trusted anchor failed a check"
                }
            case .expired(let s, let notAfter, let at):
                return "\(s) expired at \(Self.format(notAfter)) (evaluated at \(Self.format(at)))"
            case .notYetValid(let s, let notBefore, let at):
                return "\(s) is not valid before \(Self.format(notBefore)) (evaluated at \(Self.format(at)))"
            case .nameMismatch(let expected, let presented):
                return presented.isEmpty
                    ? "the certificate is not valid for \(expected): it holds no DNS or IP names"
                    : "the certificate is not valid for \(expected); it holds \(Self.list(presented, atMost: 20))"
            case .missingSubjectAlternativeName(let s):
                return "\(s) has no subjectAltName extension; names in the subject CN are not accepted (RFC 6125, CA/B Forum)"
            case .missingExtendedKeyUsage(let s, let required):
                return "\(s) does not allow extended key usage \(required)"
            case .extendedKeyUsageExcludedByIssuer(let s, let required):
                return "the CA \(s) restricts extended key usage and does not allow \(required)"
            case .weakKey(let s, let key, let minimum):
                return "\(s) has a key that is too weak (\(key)); the minimum is \(minimum)"
            case .weakSignatureAlgorithm(let s, let alg):
                return "\(s) is signed with \(alg), which is not accepted (SHA-256 or stronger is required)"
            case .pinMismatch(let seen, let expected):
                return
                    "no certificate on the validated path has a pinned key (one only appended to the presented chain is not on it); path pins: \(seen.map(\.description).joined(separator: ", ")); expected one of: \(expected.map(\.description).joined(separator: ", "))"
            case .pinnedCertificateNotInPath(let pinned):
                return "none of the pinned certificates (\(pinned.joined(separator: "; "))) is on the validated path"
            case .pinningRequired(let why):
                return why
            case .malformedCertificate(let s, let detail):
                return "\(s) cannot be processed: \(detail)"
            case .issuerNotCertificateAuthority(let s):
                return "\(s) issued a certificate but is not a CA (basicConstraints)"
            case .pathLengthConstraintViolated(let s, let max):
                return "the path under \(s) has more intermediate CAs than its pathLenConstraint of \(max) allows"
            case .leafIsCertificateAuthority(let s):
                return "the server certificate \(s) is a CA certificate"
            case .issuerKeyUsageForbidsCertificateSigning(let s):
                return "\(s) has a keyUsage without keyCertSign, so it may not issue certificates"
            case .leafKeyUsageInvalid(let s, let detail):
                return "\(s): \(detail)"
            case .unhandledCriticalExtension(let s, let oid):
                return "\(s) has a critical extension \(oid) that this validator does not process"
            case .nameConstraintViolation(let s, let name, let by):
                return "the name \(name) in \(s) violates the name constraints of \(by)"
            case .pathTooLong(let n, let max):
                return "the path has \(n) intermediate certificates; at most \(max) are allowed"
            case .pathTooCostly(let why):
                return "validation refused: \(why)"
            case .emptyChain:
                return "the server presented no certificate"
            case .peerNameRequired:
                return "no host name or IP address was given to check the certificate against"
            case .refusedByApplication(let why):
                return why
            case .revoked(let s, let serial, let reason, let at, let source):
                return "\(s) (serial \(serial)) was revoked at \(Self.format(at)), reason \(reason), according to the \(source)"
            case .revocationStatusUnknown(let s, let detail):
                return "the revocation status of \(s) is unknown and revocation checking is hard: \(detail)"
            case .certificateTransparencyPolicyNotMet(let s, _, _, _, _, _, _, let detail):
                return "\(s) does not meet the Certificate Transparency policy: \(detail)"
            case .svidURICount(let s, let uris):
                return uris.isEmpty
                    ? "\(s) holds no URI SAN, so no SPIFFE ID; an X.509-SVID holds exactly one (X509-SVID §2)"
                    : "\(s) holds \(uris.count) URI SANs (\(Self.list(uris, atMost: 20))); an X.509-SVID holds exactly one (X509-SVID §2, §5.2)"
            case .svidInvalidSPIFFEID(let s, let error):
                return "the URI SAN of \(s) is not a valid SPIFFE ID: \(error.sentence)"
            case .svidRequirementNotMet(let s, let id, let requirement):
                return "\(s)\(id.isEmpty ? "" : " (\(id))") breaks an X.509-SVID rule: \(requirement)"
            case .spiffeTrustDomainNotTrusted(let id, let domain, let anchor?):
                return "\(id) is in trust domain \(domain), but its path ends at \(anchor), an authority of another trust domain"
            case .spiffeTrustDomainNotTrusted(let id, let domain, nil):
                return "\(id) is in trust domain \(domain), for which no SPIFFE bundle is trusted"
            case .spiffeIDNotAllowed(let id, let allowed):
                return "the SPIFFE ID \(id) is not allowed; allowed: \(Self.list(allowed, atMost: 20))"
            case .rootDistrusted(let root, let label, .notTrustedForServers):
                return "the path ends at \(root) (\(label) in Mozilla's root store), which Mozilla does not trust for TLS servers"
            case .rootDistrusted(let root, let label, .distrusted):
                return "the path ends at \(root) (\(label) in Mozilla's root store), which Mozilla explicitly distrusts"
            case .rootDistrusted(let root, let label, .issuedAfterDistrustDate(let after, let notBefore)):
                return
                    "the path ends at \(root) (\(label) in Mozilla's root store), which Mozilla trusts only for certificates issued until \(Self.format(after)); the leaf was issued \(Self.format(notBefore))"
            }
        }

        static func format(_ date: Date) -> String { RFC3339.string(date) }

        /// `items` joined by commas, the first `limit` only (a leaf may hold thousands of names).
        static func list(_ items: [String], atMost limit: Int) -> String {
            guard items.count > limit else { return items.joined(separator: ", ") }
            return items.prefix(limit).joined(separator: ", ") + " … and \(items.count - limit) more"
        }
    }
}

extension TrustFailureReason {
    /// Why no path to an anchor could be built.
    package enum NoPathDetail: Hashable, Sendable {
        /// The leaf is self-signed and not among the anchors.
        case selfSignedLeaf(subject: String)
        /// The chain ends at a self-signed root that is not trusted.
        case untrustedRoot(subject: String)
        /// The issuer of the last certificate that could be chained was neither presented nor an anchor
        /// (typically an incomplete chain: the server does not send its intermediate).
        case missingIssuer(issuer: String, of: String)
        /// The presented chain ends at a CA certificate whose issuer (usually a root) is not a
        /// trusted anchor.
        case issuerNotTrusted(issuer: String, of: String)
        /// A certificate's issuer was found by name, but its signature does not verify.
        case badSignature(subject: String)
        /// Candidate paths existed but each failed another check (listed beside this one).
        case everyCandidateFailed
    }
}

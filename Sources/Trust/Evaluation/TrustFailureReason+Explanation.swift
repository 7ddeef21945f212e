extension TrustFailureReason {
    /// What a reason means and what usually fixes it: the one wording of each reason, for every program that
    /// shows one (`trust inspect` prints the whole, `trust demo` the summary, `trust get` the fix).
    ///
    /// Every part is safe to show: a name or a text a certificate, a CRL or an OCSP responder chose is escaped
    /// (``DisplayText``).
    public struct Explanation: Hashable, Sendable, CustomStringConvertible {
        /// A few words that name the failure (`expired`, `pin mismatch`): a heading, a table cell.
        public let summary: String
        /// What happened, naming the certificates: the reason's ``TrustFailureReason/description``.
        public let meaning: String
        /// What usually fixes it.
        public let fix: String

        /// `summary: meaning. Fix: fix.`
        public var description: String { "\(summary): \(meaning). Fix: \(fix)." }
    }

    /// What the reason means and its likely fix.
    public var explanation: Explanation {
        Explanation(summary: summary.description, meaning: description, fix: likelyFix.description)
    }

    /// A few words that name the reason. Exhaustive: a new reason cannot be added without its words.
    private var summary: DisplayText {
        switch detail {
        case .noPathToTrustedAnchor(let detail):
            switch detail {
            case .selfSignedLeaf: return "self-signed"
            case .untrustedRoot, .issuerNotTrusted: return "unknown root"
            case .missingIssuer: return "incomplete chain or unknown CA"
            case .badSignature: return "bad signature"
            case .everyCandidateFailed: return "no valid path"
            }
        case .expired: return "expired"
        case .notYetValid: return "not yet valid"
        case .nameMismatch: return "name mismatch"
        case .missingSubjectAlternativeName: return "no subjectAltName"
        case .missingExtendedKeyUsage: return "extended key usage not allowed"
        case .extendedKeyUsageExcludedByIssuer: return "extended key usage excluded by a CA"
        case .weakKey: return "weak key"
        case .weakSignatureAlgorithm: return "weak signature"
        case .pinMismatch: return "pin mismatch"
        case .pinnedCertificateNotInPath: return "pinned certificate not on the path"
        case .pinningRequired: return "pins required"
        case .malformedCertificate: return "malformed certificate"
        case .issuerNotCertificateAuthority: return "issuer is not a CA"
        case .pathLengthConstraintViolated: return "path length constraint exceeded"
        case .leafIsCertificateAuthority: return "server certificate is a CA"
        case .issuerKeyUsageForbidsCertificateSigning: return "issuer may not sign certificates"
        case .leafKeyUsageInvalid: return "key usage not allowed"
        case .unhandledCriticalExtension: return "unhandled critical extension"
        case .nameConstraintViolation: return "name constraint violation"
        case .pathTooLong: return "path too long"
        case .pathTooCostly: return "path too costly"
        case .emptyChain: return "no certificate"
        case .peerNameRequired: return "no name to check"
        case .refusedByApplication: return "refused by the application"
        case .revoked(_, _, let reason, _, _): return "revoked (\(reason))"
        case .revocationStatusUnknown: return "revocation status unknown"
        case .certificateTransparencyPolicyNotMet(_, let valid, let required, _, _, let invalid, _, _):
            return "CT policy not met: \(valid) of \(required) valid SCTs\(escaped: invalid > 0 ? ", \(invalid) invalid" : "")"
        case .svidURICount: return "not one SPIFFE ID"
        case .svidInvalidSPIFFEID(_, let error): return "invalid SPIFFE ID (\(error.code))"
        case .svidRequirementNotMet(_, _, let requirement): return "X.509-SVID rule broken (\(requirement.rawValue))"
        case .spiffeTrustDomainNotTrusted: return "SPIFFE trust domain not trusted"
        case .spiffeIDNotAllowed: return "SPIFFE ID not allowed"
        case .rootDistrusted: return "distrusted root"
        }
    }

    /// What usually fixes the reason. Exhaustive, as ``summary``.
    private var likelyFix: DisplayText {
        switch detail {
        case .noPathToTrustedAnchor(let detail):
            switch detail {
            case .selfSignedLeaf:
                return "give the server a certificate issued by a CA, or trust this exact certificate: add it to the anchors or pin it"
            case .untrustedRoot:
                return "if you trust that CA, add its certificate to the anchors"
            case .missingIssuer(let issuer, _):
                return
                    "if \(issuer) is an intermediate, configure the server to send it after its certificate; if it is a root you trust, add it to the anchors"
            case .issuerNotTrusted(let issuer, _):
                return "if you trust \(issuer), add its certificate to the anchors"
            case .badSignature:
                return "the chain was tampered with or mixed up: give the server its own certificate followed by the certificates that issued it"
            case .everyCandidateFailed:
                return "see the other reasons given with this one"
            }
        case .expired:
            return "renew the certificate on the server (or check this machine's clock)"
        case .notYetValid:
            return "check this machine's clock, or the server's certificate dates"
        case .nameMismatch(let expected, _):
            return "connect with a name the certificate holds, or get a certificate that includes \(expected)"
        case .missingSubjectAlternativeName:
            return "reissue the certificate with its names in a subjectAltName extension"
        case .missingExtendedKeyUsage(_, let required):
            return "reissue the certificate with extended key usage \(required)"
        case .extendedKeyUsageExcludedByIssuer(_, let required):
            return "have the certificate issued under a CA whose extended key usage allows \(required)"
        case .weakKey(_, _, let minimum):
            return "reissue the certificate with a stronger key (at least \(minimum))"
        case .weakSignatureAlgorithm:
            return "reissue the certificate signed with SHA-256 or stronger"
        case .pinMismatch:
            return
                "if this server is genuine, pin the key of the CA that issued its certificate, plus a backup pin; if not, this is the interception pinning exists to stop"
        case .pinnedCertificateNotInPath:
            return "if this server is genuine, pin a certificate of the path it validates to; if not, this is the interception pinning exists to stop"
        case .pinningRequired:
            return "give the policy at least one pin"
        case .malformedCertificate:
            return "reissue the certificate in the form RFC 5280 requires"
        case .issuerNotCertificateAuthority:
            return "configure the server to send the CA certificates that issued its own, not other certificates"
        case .pathLengthConstraintViolated:
            return "have the certificate issued under fewer intermediate CAs"
        case .leafIsCertificateAuthority:
            return "give the server an end-entity certificate (basicConstraints without cA)"
        case .issuerKeyUsageForbidsCertificateSigning:
            return "have the certificate issued by a CA whose keyUsage allows keyCertSign"
        case .leafKeyUsageInvalid:
            return "reissue the certificate with the keyUsage a TLS server needs (digitalSignature)"
        case .unhandledCriticalExtension:
            return "reissue the certificate without that extension, or with it not critical"
        case .nameConstraintViolation:
            return "get a certificate whose names the CA may issue, or one from another CA"
        case .pathTooLong:
            return "have the certificate issued under fewer intermediate CAs"
        case .pathTooCostly:
            return "configure the server to send only its certificate and the intermediates that issued it"
        case .emptyChain:
            return "configure the server with its certificate and intermediates"
        case .peerNameRequired:
            return "give the host name or IP address to check the certificate against"
        case .refusedByApplication:
            return "see the application's challenge handler or trust configuration"
        case .revoked:
            return "the server needs a new certificate (its key may be compromised): do not trust this one"
        case .revocationStatusUnknown:
            return "make the OCSP responder or CRL distribution point reachable, or use soft revocation checking"
        case .certificateTransparencyPolicyNotMet:
            return "reissue the certificate with SCTs from enough distinct CT log operators, or use CT report-only"
        case .svidURICount:
            return "give the workload an SVID from its SPIFFE issuer: one URI SAN holding its spiffe:// ID"
        case .svidInvalidSPIFFEID:
            return "have the SVID reissued with a valid spiffe://TRUST-DOMAIN/PATH ID (lowercase trust domain; no empty, '.' or '..' segment)"
        case .svidRequirementNotMet:
            return
                "have the SVID reissued as X509-SVID requires (leaf: cA false, critical keyUsage with digitalSignature, neither keyCertSign nor cRLSign — keyEncipherment and keyAgreement may be set; signing CA: cA true, critical keyUsage with keyCertSign)"
        case .spiffeTrustDomainNotTrusted(_, let domain, _):
            return "if you trust \(domain), add its SPIFFE bundle (TRUST-DOMAIN=FILE); otherwise this peer belongs to a domain you do not trust"
        case .spiffeIDNotAllowed(let id, _):
            return "if \(id) should be allowed, add it (or its trust domain, or a path prefix above it) to the allowed SPIFFE IDs"
        case .rootDistrusted(_, _, .issuedAfterDistrustDate):
            return "have the certificate reissued by a CA that the browsers still trust (this CA's new certificates are refused)"
        case .rootDistrusted:
            return "have the certificate reissued by a CA that the browsers trust; to trust this root anyway, add it as an anchor (--cacert)"
        }
    }
}

/// One MUST of the X.509-SVID specification (X509-SVID.md) that a certificate on an SVID path broke; carried by
/// ``TrustFailureReason/Kind/svidRequirementNotMet``.
public enum SVIDRequirement: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// §4.1, §5.2: a leaf SVID's basicConstraints `cA` is false.
    case leafIsNotCA = "leaf-not-ca"
    /// §4.3: every SVID (leaf or signing) carries a keyUsage extension.
    case keyUsagePresent = "key-usage-present"
    /// §4.3: that keyUsage extension is critical.
    case keyUsageCritical = "key-usage-critical"
    /// §4.3: a leaf SVID asserts `digitalSignature`.
    case leafDigitalSignature = "leaf-digital-signature"
    /// §4.3, §5.2: a leaf SVID does not assert `keyCertSign`.
    case leafNoKeyCertSign = "leaf-no-key-cert-sign"
    /// §4.3, §5.2: a leaf SVID does not assert `cRLSign`.
    case leafNoCRLSign = "leaf-no-crl-sign"
    /// §3.1, §5.2: a leaf SVID's SPIFFE ID has a non-root path.
    case leafIDHasPath = "leaf-id-has-path"
    /// §3.1 (RFC 5280 §4.1.2.6): without a subject, the URI SAN extension is critical.
    case uriSANCriticalWithoutSubject = "uri-san-critical-without-subject"
    /// §3.2, §4.1: a signing certificate's basicConstraints `cA` is true.
    case signingCertificateIsCA = "signing-ca"
    /// §3.2, §4.3: a signing certificate asserts `keyCertSign`.
    case signingCertificateKeyCertSign = "signing-key-cert-sign"
    /// §3.2: a signing certificate's SPIFFE ID, if it has one, has no path.
    case signingIDHasNoPath = "signing-id-no-path"

    /// The requirement, in words, with its section.
    public var description: String {
        switch self {
        case .leafIsNotCA: return "a leaf SVID must not be a CA: basicConstraints cA false (X509-SVID §4.1, §5.2)"
        case .keyUsagePresent: return "every SVID must carry a keyUsage extension (X509-SVID §4.3)"
        case .keyUsageCritical: return "the keyUsage extension of an SVID must be critical (X509-SVID §4.3)"
        case .leafDigitalSignature: return "a leaf SVID must assert digitalSignature (X509-SVID §4.3)"
        case .leafNoKeyCertSign: return "a leaf SVID must not assert keyCertSign (X509-SVID §4.3, §5.2)"
        case .leafNoCRLSign: return "a leaf SVID must not assert cRLSign (X509-SVID §4.3, §5.2)"
        case .leafIDHasPath: return "a leaf SVID's SPIFFE ID must have a path, not only a trust domain (X509-SVID §3.1, §5.2)"
        case .uriSANCriticalWithoutSubject: return "an SVID without a subject must mark its URI SAN extension critical (X509-SVID §3.1)"
        case .signingCertificateIsCA: return "a signing certificate must be a CA: basicConstraints cA true (X509-SVID §3.2, §4.1)"
        case .signingCertificateKeyCertSign: return "a signing certificate must assert keyCertSign (X509-SVID §3.2, §4.3)"
        case .signingIDHasNoPath: return "a signing certificate's SPIFFE ID must not have a path (X509-SVID §3.2)"
        }
    }
}

import Crypto
import SwiftASN1
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// X.509-SVIDs (SPIFFE, X509-SVID.md) issued by the lab: a trust domain's signing certificates and workload leaves
/// identified by a URI SAN only, with every property the SVID rules look at chosen by the caller (for the refusals).
extension LabAuthority {
    /// The key usages X509-SVID.md §4.3 gives a signing certificate: keyCertSign and cRLSign.
    public static let svidSigningKeyUsage = KeyUsage(keyCertSign: true, cRLSign: true)
    /// The key usage X509-SVID.md §4.3 gives a leaf: digitalSignature.
    public static let svidLeafKeyUsage = KeyUsage(digitalSignature: true)

    /// A self-signed root for `trustDomain` (e.g. `example.org`), an SVID of the trust domain (URI SAN
    /// `spiffe://trustDomain`, X509-SVID.md §3.2); `keyUsageCritical` false marks its keyUsage non-critical.
    public static func spiffeRoot(trustDomain: String, keyType: LabKeyType = .p256, keyUsageCritical: Bool = true) throws -> LabAuthority {
        let key = try keyType.generate()
        let name = try DistinguishedName {
            OrganizationName("swift-trust lab")
            CommonName("SPIFFE \(trustDomain) root")
        }
        var extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            SubjectKeyIdentifier(keyIdentifier: keyIdentifier(key.publicKey))
            AuthorityKeyIdentifier(keyIdentifier: keyIdentifier(key.publicKey))
        }
        try extensions.append(Certificate.Extension(svidSigningKeyUsage, critical: keyUsageCritical))
        try extensions.append(Certificate.Extension(SubjectAlternativeNames([.uniformResourceIdentifier("spiffe://" + trustDomain)]), critical: false))
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: key.publicKey, notValidBefore: Date(timeIntervalSinceNow: -86_400),
            notValidAfter: Date(timeIntervalSinceNow: 10 * 365 * 86_400), issuer: name, subject: name, signatureAlgorithm: keyType.signatureAlgorithm,
            extensions: extensions, issuerPrivateKey: key)
        return LabAuthority(identity: LabIdentity(certificate: certificate, privateKey: key, keyType: keyType))
    }

    /// A signing certificate issued by this authority, for the refusals: `isCA` (`nil`: no basicConstraints),
    /// `keyUsage` (`nil`: none) and its criticality, and the URI SANs (`spiffe://TD`, or one with a path) chosen.
    public func spiffeSigningCertificate(
        commonName: String, uris: [String], isCA: Bool? = true, keyUsage: KeyUsage? = LabAuthority.svidSigningKeyUsage,
        keyUsageCritical: Bool = true, keyType: LabKeyType = .p256
    ) throws -> LabAuthority {
        let key = try keyType.generate()
        let name = try DistinguishedName {
            OrganizationName("swift-trust lab")
            CommonName(commonName)
        }
        let extensions = try Self.svidExtensions(
            publicKey: key.publicKey, issuerKey: certificate.publicKey, uris: uris, sanCritical: false, isCA: isCA, keyUsage: keyUsage,
            keyUsageCritical: keyUsageCritical, extendedKeyUsage: nil)
        let issued = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: key.publicKey, notValidBefore: Date(timeIntervalSinceNow: -86_400),
            notValidAfter: Date(timeIntervalSinceNow: 5 * 365 * 86_400), issuer: certificate.subject, subject: name,
            signatureAlgorithm: identity.keyType.signatureAlgorithm, extensions: extensions, issuerPrivateKey: identity.privateKey)
        let chainAbove = certificate.isSelfIssued ? [] : identity.chain
        return LabAuthority(identity: LabIdentity(certificate: issued, privateKey: key, keyType: keyType, intermediates: chainAbove))
    }

    /// A leaf X.509-SVID for `spiffeID` (its only URI SAN, no DNS name) issued by this authority.
    ///
    /// - Parameters:
    ///   - uris: the URI SANs instead of `[spiffeID]` (none, two, an invalid one…).
    ///   - hasSubject: `false` leaves the subject empty (X509-SVID.md §3.1: the SAN must then be critical).
    ///   - sanCritical: the SAN's criticality; `nil`: critical exactly when the subject is empty (RFC 5280 §4.2.1.6).
    ///   - isCA: basicConstraints cA; `nil` leaves the extension out.
    ///   - keyUsage: `nil` leaves the extension out.
    ///   - extendedKeyUsage: `nil` leaves the extension out (X509-SVID.md §4.4: serverAuth and clientAuth when present).
    public func svid(
        _ spiffeID: String, uris: [String]? = nil, hasSubject: Bool = true, sanCritical: Bool? = nil, isCA: Bool? = false,
        keyUsage: KeyUsage? = LabAuthority.svidLeafKeyUsage, keyUsageCritical: Bool = true,
        extendedKeyUsage: [ExtendedKeyUsage.Usage]? = [.serverAuth, .clientAuth], keyType: LabKeyType = .p256,
        notBefore: Date = Date(timeIntervalSinceNow: -86_400), notAfter: Date = Date(timeIntervalSinceNow: 90 * 86_400)
    ) throws -> LabIdentity {
        let key = try keyType.generate()
        let name =
            hasSubject
            ? try DistinguishedName {
                OrganizationName("swift-trust lab")
                CommonName("SVID \(spiffeID.suffix(40))")
            } : DistinguishedName()
        let extensions = try Self.svidExtensions(
            publicKey: key.publicKey, issuerKey: certificate.publicKey, uris: uris ?? [spiffeID], sanCritical: sanCritical ?? !hasSubject, isCA: isCA,
            keyUsage: keyUsage, keyUsageCritical: keyUsageCritical, extendedKeyUsage: extendedKeyUsage)
        let issued = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: key.publicKey, notValidBefore: notBefore, notValidAfter: notAfter,
            issuer: certificate.subject, subject: name, signatureAlgorithm: identity.keyType.signatureAlgorithm, extensions: extensions,
            issuerPrivateKey: identity.privateKey)
        let chainAbove = certificate.isSelfIssued ? [] : identity.chain
        return LabIdentity(certificate: issued, privateKey: key, keyType: keyType, intermediates: chainAbove)
    }

    static func svidExtensions(
        publicKey: Certificate.PublicKey, issuerKey: Certificate.PublicKey, uris: [String], sanCritical: Bool, isCA: Bool?, keyUsage: KeyUsage?,
        keyUsageCritical: Bool, extendedKeyUsage: [ExtendedKeyUsage.Usage]?
    ) throws -> Certificate.Extensions {
        var extensions = try Certificate.Extensions {
            SubjectKeyIdentifier(keyIdentifier: keyIdentifier(publicKey))
            AuthorityKeyIdentifier(keyIdentifier: keyIdentifier(issuerKey))
        }
        if let isCA {
            try extensions.append(
                Certificate.Extension(
                    isCA ? BasicConstraints.isCertificateAuthority(maxPathLength: nil) : BasicConstraints.notCertificateAuthority, critical: true))
        }
        if let keyUsage { try extensions.append(Certificate.Extension(keyUsage, critical: keyUsageCritical)) }
        if !uris.isEmpty {
            try extensions.append(Certificate.Extension(SubjectAlternativeNames(uris.map { .uniformResourceIdentifier($0) }), critical: sanCritical))
        }
        if let extendedKeyUsage { try extensions.append(Certificate.Extension(ExtendedKeyUsage(extendedKeyUsage), critical: false)) }
        return extensions
    }
}

import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a person (or a script) wants to see of a certificate in a report.
package struct CertificateSummary: Sendable, Hashable, Codable {
    /// The subject distinguished name, as text.
    package var subject: String
    /// The issuer distinguished name, as text.
    package var issuer: String
    /// The serial number as `openssl x509 -serial` prints it (upper-case hex, two digits a byte).
    package var serialNumber: String
    /// The start of the validity period.
    package var notBefore: Date
    /// The end of the validity period.
    package var notAfter: Date
    /// dNSName / iPAddress (and email:/URI:) SAN entries; `nil` when there is no SAN extension.
    package var subjectAlternativeNames: [String]?
    /// The key type and size, such as `RSA 2048` or `ECDSA P-256`.
    package var key: String
    /// The certificate's signature algorithm under OpenSSL's name (`ecdsa-with-SHA256`, `sha256WithRSAEncryption`).
    package var signatureAlgorithm: String
    /// `sha256/BASE64`.
    package var pin: String
    /// SHA-256 of the DER certificate, hex with colons.
    package var sha256Fingerprint: String
    /// Whether basicConstraints marks the certificate as a CA.
    package var isCertificateAuthority: Bool
    /// Whether subject and issuer are the same name.
    package var isSelfIssued: Bool

    /// Summarises `certificate`.
    package init(_ certificate: Certificate) {
        subject = certificate.subject.description
        issuer = certificate.issuer.description
        serialNumber = certificate.openSSLSerial
        notBefore = certificate.notValidBefore
        notAfter = certificate.notValidAfter
        subjectAlternativeNames = certificate.subjectAlternativeNameStrings
        key = certificate.publicKeyDescription.description
        signatureAlgorithm = certificate.openSSLSignatureAlgorithmName
        pin = certificate.spkiPin.description
        sha256Fingerprint = certificate.sha256Fingerprint.hexText(separator: ":", uppercase: true)
        isCertificateAuthority = certificate.isCertificateAuthority
        isSelfIssued = certificate.isSelfIssued
    }
}

import Foundation
import X509

/// What a person (or a script) wants to see of a certificate in a report.
public struct CertificateSummary: Sendable, Hashable, Codable {
    public var subject: String
    public var issuer: String
    public var serialNumber: String
    public var notBefore: Date
    public var notAfter: Date
    /// dNSName / iPAddress (and email:/URI:) SAN entries; `nil` when there is no SAN extension.
    public var subjectAlternativeNames: [String]?
    public var key: String
    public var signatureAlgorithm: String
    /// `sha256/BASE64`.
    public var pin: String
    /// SHA-256 of the DER certificate, hex with colons.
    public var sha256Fingerprint: String
    public var isCertificateAuthority: Bool
    public var isSelfIssued: Bool

    public init(_ certificate: Certificate) {
        subject = certificate.subject.description
        issuer = certificate.issuer.description
        serialNumber = certificate.serialNumber.description
        notBefore = certificate.notValidBefore
        notAfter = certificate.notValidAfter
        subjectAlternativeNames = certificate.subjectAlternativeNameStrings
        key = certificate.publicKeyDescription.description
        signatureAlgorithm = certificate.signatureAlgorithm.description
        pin = certificate.spkiPin.description
        sha256Fingerprint = certificate.sha256Fingerprint.map { String(format: "%02X", $0) }.joined(separator: ":")
        isCertificateAuthority = certificate.isCertificateAuthority
        isSelfIssued = certificate.isSelfIssued
    }
}

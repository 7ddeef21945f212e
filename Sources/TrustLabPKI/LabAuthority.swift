import Crypto
import SwiftASN1
import Trust
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A certificate authority in the lab: a root or an intermediate that issues certificates.
public struct LabAuthority: Sendable {
    /// The authority's certificate and private key.
    public let identity: LabIdentity
    /// The authority's certificate.
    public var certificate: Certificate { identity.certificate }

    /// A new self-signed root CA.
    public static func root(
        commonName: String = "swift-trust Lab Root CA", keyType: LabKeyType = .p256,
        notBefore: Date = Date(timeIntervalSinceNow: -86_400), notAfter: Date = Date(timeIntervalSinceNow: 10 * 365 * 86_400),
        nameConstraints: NameConstraints? = nil
    ) throws -> LabAuthority {
        let key = try keyType.generate()
        let name = try DistinguishedName {
            OrganizationName("swift-trust lab")
            CommonName(commonName)
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: key.publicKey, notValidBefore: notBefore, notValidAfter: notAfter,
            issuer: name, subject: name, signatureAlgorithm: keyType.signatureAlgorithm,
            extensions: try Self.caExtensions(publicKey: key.publicKey, issuerKey: key.publicKey, pathLength: nil, nameConstraints: nameConstraints),
            issuerPrivateKey: key)
        return LabAuthority(identity: LabIdentity(certificate: certificate, privateKey: key, keyType: keyType))
    }

    /// An intermediate CA issued by this authority.
    public func intermediate(
        commonName: String, keyType: LabKeyType = .p256, pathLength: Int? = nil,
        notBefore: Date = Date(timeIntervalSinceNow: -86_400), notAfter: Date = Date(timeIntervalSinceNow: 5 * 365 * 86_400),
        extendedKeyUsage: [ExtendedKeyUsage.Usage]? = nil, nameConstraints: NameConstraints? = nil, ocspResponders: [String] = []
    ) throws -> LabAuthority {
        try issueIntermediate(
            commonName: commonName, keyType: keyType, pathLength: pathLength, notBefore: notBefore, notAfter: notAfter,
            extendedKeyUsage: extendedKeyUsage, nameConstraints: nameConstraints, ocspResponders: ocspResponders, caIssuers: [])
    }

    /// An intermediate CA issued by this authority whose Authority Information Access names `caIssuers`: where a
    /// client that was not sent this authority's certificate may fetch it (RFC 5280 §4.2.2.1).
    package func intermediate(
        commonName: String, keyType: LabKeyType = .p256, pathLength: Int? = nil, ocspResponders: [String] = [], caIssuers: [String]
    ) throws -> LabAuthority {
        try issueIntermediate(
            commonName: commonName, keyType: keyType, pathLength: pathLength, notBefore: Date(timeIntervalSinceNow: -86_400),
            notAfter: Date(timeIntervalSinceNow: 5 * 365 * 86_400), extendedKeyUsage: nil, nameConstraints: nil, ocspResponders: ocspResponders,
            caIssuers: caIssuers)
    }

    private func issueIntermediate(
        commonName: String, keyType: LabKeyType, pathLength: Int?, notBefore: Date, notAfter: Date, extendedKeyUsage: [ExtendedKeyUsage.Usage]?,
        nameConstraints: NameConstraints?, ocspResponders: [String], caIssuers: [String]
    ) throws -> LabAuthority {
        let key = try keyType.generate()
        let name = try DistinguishedName {
            OrganizationName("swift-trust lab")
            CommonName(commonName)
        }
        var extensions = try Self.caExtensions(
            publicKey: key.publicKey, issuerKey: identity.certificate.publicKey, pathLength: pathLength, nameConstraints: nameConstraints)
        if let access = try Self.authorityInformationAccess(ocsp: ocspResponders, caIssuers: caIssuers) { try extensions.append(access) }
        if let extendedKeyUsage {
            try extensions.append(Certificate.Extension(ExtendedKeyUsage(extendedKeyUsage), critical: false))
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: key.publicKey, notValidBefore: notBefore, notValidAfter: notAfter,
            issuer: identity.certificate.subject, subject: name, signatureAlgorithm: identity.keyType.signatureAlgorithm,
            extensions: extensions, issuerPrivateKey: identity.privateKey)
        let chainAbove = identity.certificate.isSelfIssued ? [] : identity.chain
        return LabAuthority(identity: LabIdentity(certificate: certificate, privateKey: key, keyType: keyType, intermediates: chainAbove))
    }

    /// A CA certificate for `other`'s name and key, issued by this authority (a cross-certificate:
    /// `other` then has two issuers, its own and this one).
    package func crossCertificate(
        for other: LabAuthority, pathLength: Int? = nil,
        notBefore: Date = Date(timeIntervalSinceNow: -86_400), notAfter: Date = Date(timeIntervalSinceNow: 5 * 365 * 86_400)
    ) throws -> Certificate {
        try Certificate(
            version: .v3, serialNumber: .init(), publicKey: other.certificate.publicKey, notValidBefore: notBefore, notValidAfter: notAfter,
            issuer: identity.certificate.subject, subject: other.certificate.subject, signatureAlgorithm: identity.keyType.signatureAlgorithm,
            extensions: try Self.caExtensions(
                publicKey: other.certificate.publicKey, issuerKey: identity.certificate.publicKey, pathLength: pathLength, nameConstraints: nil),
            issuerPrivateKey: identity.privateKey)
    }

    /// An end-entity certificate issued by this authority.
    ///
    /// - Parameters:
    ///   - dnsNames: subjectAltName dNSNames (none: no DNS names).
    ///   - ipAddresses: subjectAltName iPAddresses, as text.
    ///   - includesSubjectAltName: `false` leaves the SAN extension out entirely (CN-only certificates).
    ///   - extendedKeyUsage: `nil` leaves the EKU extension out.
    ///   - signatureAlgorithm: overrides the issuer's default (e.g. `.sha1WithRSAEncryption` from an RSA CA).
    ///   - crlDistributionPoints: URIs for a CRL Distribution Points extension, one distribution point each (none: no extension).
    ///   - ocspResponders: URIs for an authorityInformationAccess extension, one id-ad-ocsp access description each (none: no extension).
    public func leaf(
        commonName: String? = nil, dnsNames: [String] = [], ipAddresses: [String] = [], includesSubjectAltName: Bool = true,
        keyType: LabKeyType = .p256, notBefore: Date = Date(timeIntervalSinceNow: -86_400), notAfter: Date = Date(timeIntervalSinceNow: 90 * 86_400),
        extendedKeyUsage: [ExtendedKeyUsage.Usage]? = [.serverAuth], isCA: Bool = false,
        signatureAlgorithm: Certificate.SignatureAlgorithm? = nil, crlDistributionPoints: [String] = [], ocspResponders: [String] = []
    ) throws -> LabIdentity {
        try issueLeaf(
            commonName: commonName, dnsNames: dnsNames, ipAddresses: ipAddresses, includesSubjectAltName: includesSubjectAltName, keyType: keyType,
            notBefore: notBefore, notAfter: notAfter, extendedKeyUsage: extendedKeyUsage, isCA: isCA, signatureAlgorithm: signatureAlgorithm,
            crlDistributionPoints: crlDistributionPoints, ocspResponders: ocspResponders, caIssuers: [])
    }

    /// A server leaf issued by this authority whose Authority Information Access names `caIssuers`: where a client
    /// that was not sent this authority's certificate may fetch it (RFC 5280 §4.2.2.1).
    package func leaf(
        dnsNames: [String], notAfter: Date = Date(timeIntervalSinceNow: 90 * 86_400), ocspResponders: [String] = [], caIssuers: [String]
    ) throws -> LabIdentity {
        try issueLeaf(
            commonName: nil, dnsNames: dnsNames, ipAddresses: [], includesSubjectAltName: true, keyType: .p256,
            notBefore: Date(timeIntervalSinceNow: -86_400), notAfter: notAfter, extendedKeyUsage: [.serverAuth], isCA: false, signatureAlgorithm: nil,
            crlDistributionPoints: [], ocspResponders: ocspResponders, caIssuers: caIssuers)
    }

    private func issueLeaf(
        commonName: String?, dnsNames: [String], ipAddresses: [String], includesSubjectAltName: Bool, keyType: LabKeyType, notBefore: Date,
        notAfter: Date, extendedKeyUsage: [ExtendedKeyUsage.Usage]?, isCA: Bool, signatureAlgorithm: Certificate.SignatureAlgorithm?,
        crlDistributionPoints: [String], ocspResponders: [String], caIssuers: [String]
    ) throws -> LabIdentity {
        let key = try keyType.generate()
        let name = try DistinguishedName {
            OrganizationName("swift-trust lab")
            CommonName(commonName ?? dnsNames.first ?? ipAddresses.first ?? "lab leaf")
        }
        var extensions = try Self.leafExtensions(
            publicKey: key.publicKey, issuerKey: identity.certificate.publicKey, dnsNames: dnsNames, ipAddresses: ipAddresses,
            includesSubjectAltName: includesSubjectAltName, extendedKeyUsage: extendedKeyUsage, isCA: isCA)
        if !crlDistributionPoints.isEmpty { try extensions.append(Self.crlDistributionPoints(crlDistributionPoints)) }
        if let access = try Self.authorityInformationAccess(ocsp: ocspResponders, caIssuers: caIssuers) { try extensions.append(access) }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: key.publicKey, notValidBefore: notBefore, notValidAfter: notAfter,
            issuer: identity.certificate.subject, subject: name,
            signatureAlgorithm: signatureAlgorithm ?? identity.keyType.signatureAlgorithm,
            extensions: extensions, issuerPrivateKey: identity.privateKey)
        let chainAbove = identity.certificate.isSelfIssued ? [] : identity.chain
        return LabIdentity(certificate: certificate, privateKey: key, keyType: keyType, intermediates: chainAbove)
    }

    /// A self-signed end-entity certificate (not a CA), as a development server would use.
    public static func selfSignedLeaf(
        dnsNames: [String] = [], ipAddresses: [String] = [], includesSubjectAltName: Bool = true, keyType: LabKeyType = .p256,
        notBefore: Date = Date(timeIntervalSinceNow: -86_400), notAfter: Date = Date(timeIntervalSinceNow: 90 * 86_400),
        extendedKeyUsage: [ExtendedKeyUsage.Usage]? = [.serverAuth]
    ) throws -> LabIdentity {
        let key = try keyType.generate()
        let name = try DistinguishedName {
            OrganizationName("swift-trust lab")
            CommonName(dnsNames.first ?? ipAddresses.first ?? "self-signed")
        }
        let extensions = try leafExtensions(
            publicKey: key.publicKey, issuerKey: key.publicKey, dnsNames: dnsNames, ipAddresses: ipAddresses,
            includesSubjectAltName: includesSubjectAltName, extendedKeyUsage: extendedKeyUsage, isCA: false)
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: key.publicKey, notValidBefore: notBefore, notValidAfter: notAfter,
            issuer: name, subject: name, signatureAlgorithm: keyType.signatureAlgorithm, extensions: extensions, issuerPrivateKey: key)
        return LabIdentity(certificate: certificate, privateKey: key, keyType: keyType)
    }

    static func keyIdentifier(_ key: Certificate.PublicKey) -> ArraySlice<UInt8> {
        // RFC 5280 §4.2.1.2 method (1): SHA-1 of the subjectPublicKey BIT STRING contents.
        ArraySlice(Insecure.SHA1.hash(data: Array(key.subjectPublicKeyInfoBytes)))
    }

    static func caExtensions(publicKey: Certificate.PublicKey, issuerKey: Certificate.PublicKey, pathLength: Int?, nameConstraints: NameConstraints?) throws
        -> Certificate.Extensions
    {
        var extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: pathLength))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true, cRLSign: true))
            SubjectKeyIdentifier(keyIdentifier: keyIdentifier(publicKey))
            AuthorityKeyIdentifier(keyIdentifier: keyIdentifier(issuerKey))
        }
        if let nameConstraints {
            try extensions.append(Certificate.Extension(nameConstraints, critical: true))
        }
        return extensions
    }

    /// An authorityInformationAccess extension (RFC 5280 §4.2.2.1) naming OCSP responders and issuer locations; `nil`
    /// when both lists are empty.
    static func authorityInformationAccess(ocsp: [String], caIssuers: [String]) throws -> Certificate.Extension? {
        guard !ocsp.isEmpty || !caIssuers.isEmpty else { return nil }
        let descriptions =
            ocsp.map { AuthorityInformationAccess.AccessDescription(method: .ocspServer, location: .uniformResourceIdentifier($0)) }
            + caIssuers.map { AuthorityInformationAccess.AccessDescription(method: .issuingCA, location: .uniformResourceIdentifier($0)) }
        return try Certificate.Extension(AuthorityInformationAccess(descriptions), critical: false)
    }

    /// A CRL Distribution Points extension (RFC 5280 §4.2.1.13): one point per URI, each `distributionPoint` a
    /// `fullName` holding that uniformResourceIdentifier.
    static func crlDistributionPoints(_ uris: [String]) throws -> Certificate.Extension {
        var serializer = DER.Serializer()
        serializer.appendConstructedNode(identifier: .sequence) { points in
            for uri in uris {
                points.appendConstructedNode(identifier: .sequence) { point in
                    point.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)) { name in
                        name.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)) { names in
                            names.appendPrimitiveNode(identifier: ASN1Identifier(tagWithNumber: 6, tagClass: .contextSpecific)) {
                                $0.append(contentsOf: Array(uri.utf8))
                            }
                        }
                    }
                }
            }
        }
        return Certificate.Extension(oid: [2, 5, 29, 31], critical: false, value: serializer.serializedBytes[...])
    }

    static func leafExtensions(
        publicKey: Certificate.PublicKey, issuerKey: Certificate.PublicKey, dnsNames: [String], ipAddresses: [String],
        includesSubjectAltName: Bool, extendedKeyUsage: [ExtendedKeyUsage.Usage]?, isCA: Bool
    ) throws -> Certificate.Extensions {
        var extensions = try Certificate.Extensions {
            Critical(isCA ? BasicConstraints.isCertificateAuthority(maxPathLength: nil) : BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true, keyEncipherment: true, keyCertSign: isCA))
            SubjectKeyIdentifier(keyIdentifier: keyIdentifier(publicKey))
            AuthorityKeyIdentifier(keyIdentifier: keyIdentifier(issuerKey))
        }
        if includesSubjectAltName {
            var names: [GeneralName] = dnsNames.map { .dnsName($0) }
            for text in ipAddresses {
                guard let ip = IPAddress(text) else { throw LabError.invalidIPAddress(text) }
                names.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice(ip.bytes))))
            }
            try extensions.append(Certificate.Extension(SubjectAlternativeNames(names), critical: false))
        }
        if let extendedKeyUsage {
            try extensions.append(Certificate.Extension(ExtendedKeyUsage(extendedKeyUsage), critical: false))
        }
        return extensions
    }
}

/// Lab set-up errors.
public struct LabError: Error, Sendable, CustomStringConvertible {
    /// The error with its data, for this package's code: cases come in minor versions without breaking a client,
    /// who shows the error (its description says what is wrong).
    package let detail: Detail

    package init(_ detail: Detail) { self.detail = detail }

    /// Human-readable form.
    public var description: String { detail.description }

    /// `text` is not an IP address.
    package static func invalidIPAddress(_ text: String) -> Self { Self(.invalidIPAddress(text)) }
    /// `what` (usually a file, by path) could not be written or set up, for the reason `why`; for a lab of one's own
    /// tests to fail with, too.
    public static func cannotWrite(_ what: String, _ why: String) -> Self { Self(.cannotWrite(what, why)) }

    /// The cases, exhaustive inside this package.
    package enum Detail: Sendable {
        /// The text is not an IP address.
        case invalidIPAddress(String)
        /// Something (usually a file, by path) could not be written or set up; the reason follows.
        case cannotWrite(String, String)

        /// Human-readable form.
        package var description: String {
            switch self {
            case .invalidIPAddress(let text): return "\(text) is not an IP address"
            case .cannotWrite(let path, let why): return "cannot write \(path): \(why)"
            }
        }
    }
}

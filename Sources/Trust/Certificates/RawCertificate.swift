import Crypto
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A certificate read only as far as its outer DER structure: enough to name it, pin its key
/// and say why it is refused, when a full parse fails (RSA keys under 2048 bits, MD5 or
/// ecdsa-with-SHA1 signatures, RSA-PSS — forms swift-certificates does not accept).
public struct RawCertificate: Sendable, Hashable {
    /// The certificate's complete DER encoding.
    package let der: [UInt8]
    /// The subject, as text (`nil` if even the name cannot be read).
    package let subject: String?
    /// The SPKI DER, exactly as in the certificate.
    package let subjectPublicKeyInfoDER: [UInt8]
    /// The outer signatureAlgorithm OID.
    package let signatureAlgorithmOID: ASN1ObjectIdentifier?

    /// `nil` unless `der` has the shape Certificate ::= SEQUENCE { TBSCertificate, AlgorithmIdentifier, BIT STRING }
    /// with a readable SubjectPublicKeyInfo.
    public init?(der: [UInt8]) {
        let bytes = ArraySlice(der)
        guard bytes.first == 0x30, let outer = DERWalker.element(in: bytes, at: bytes.startIndex), outer.end == bytes.endIndex,
            let tbs = DERWalker.element(in: bytes, at: outer.contentStart),
            let algorithm = DERWalker.element(in: bytes, at: tbs.end),
            let spki = DERWalker.subjectPublicKeyInfo(inTBSCertificate: bytes[outer.contentStart..<tbs.end])
        else { return nil }
        self.der = der
        self.subjectPublicKeyInfoDER = Array(spki)
        self.signatureAlgorithmOID = (try? DER.parse(Array(bytes[tbs.end..<algorithm.end])))
            .flatMap { node -> ASN1ObjectIdentifier? in
                guard case .constructed(let children) = node.content, let first = children.first(where: { _ in true }) else { return nil }
                return try? ASN1ObjectIdentifier(derEncoded: first)
            }
        self.subject =
            DERWalker.subjectName(inTBSCertificate: bytes[outer.contentStart..<tbs.end])
            .flatMap { name -> DistinguishedName? in
                guard let node = try? DER.parse(Array(name)) else { return nil }
                return try? DistinguishedName(derEncoded: node)
            }?.description
    }

    /// The SPKI pin, computed from the certificate's own bytes.
    package var spkiPin: SPKIPin { SPKIPin(subjectPublicKeyInfoDER: subjectPublicKeyInfoDER) }

    /// The key type and size, read from the SubjectPublicKeyInfo.
    package var publicKeyDescription: PublicKeyDescription { PublicKeyDescription(subjectPublicKeyInfoDER: subjectPublicKeyInfoDER) }

    static let weakSignatureAlgorithms: [ASN1ObjectIdentifier: String] = [
        [1, 2, 840, 113549, 1, 1, 4]: "md5WithRSAEncryption",
        [1, 2, 840, 113549, 1, 1, 2]: "md2WithRSAEncryption",
        [1, 2, 840, 113549, 1, 1, 5]: "sha1WithRSAEncryption",
        [1, 2, 840, 10045, 4, 1]: "ecdsa-with-SHA1",
        [1, 2, 840, 10040, 4, 3]: "dsa-with-SHA1",
    ]
    static let rsaPSS: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 10]

    /// Why a certificate in this form cannot be trusted.
    public var refusalReasons: [TrustFailureReason] {
        let name = subject ?? "an unreadable certificate"
        var reasons: [TrustFailureReason] = []
        let key = publicKeyDescription
        switch key {
        case .rsa(let bits) where bits < 2048 || bits % 8 != 0:
            reasons.append(.weakKey(subject: name, key: key.description, minimum: "RSA 2048"))
        case .ecdsa(_, let bits) where bits < 256:
            reasons.append(.weakKey(subject: name, key: key.description, minimum: "EC 256"))
        case .other(let algorithm):
            reasons.append(.weakKey(subject: name, key: algorithm == Self.rsaPSS.description ? "RSA-PSS" : key.description, minimum: "a supported key type"))
        default:
            break
        }
        if let oid = signatureAlgorithmOID {
            if let weak = Self.weakSignatureAlgorithms[oid] {
                reasons.append(.weakSignatureAlgorithm(subject: name, algorithm: weak))
            } else if oid == Self.rsaPSS {
                reasons.append(.malformedCertificate(subject: name, detail: "RSA-PSS signatures are not supported"))
            }
        }
        if reasons.isEmpty {
            reasons.append(.malformedCertificate(subject: name, detail: "the certificate cannot be parsed"))
        }
        return reasons
    }
}

import Crypto
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Certificate {
    /// The DER encoding of this certificate's SubjectPublicKeyInfo element: the bytes an
    /// SPKI pin hashes. (Not `publicKey.subjectPublicKeyInfoBytes`, which is only the
    /// BIT STRING payload.)
    ///
    /// Taken from the certificate's original TBSCertificate bytes (exactly what the CA signed
    /// and the peer sent), falling back to re-serialising the parsed key.
    package var subjectPublicKeyInfoDER: [UInt8] {
        if let bytes = DERWalker.subjectPublicKeyInfo(inTBSCertificate: tbsCertificateBytes) {
            return Array(bytes)
        }
        var serializer = DER.Serializer()
        try? serializer.serialize(self.publicKey)
        return serializer.serializedBytes
    }

    /// The certificate's DER encoding.
    public var derBytes: [UInt8] {
        var serializer = DER.Serializer()
        try? serializer.serialize(self)
        return serializer.serializedBytes
    }

    /// The certificate as one PEM `CERTIFICATE` block (64-column base64, trailing newline).
    public var pemString: String {
        "-----BEGIN CERTIFICATE-----\n"
            + Data(derBytes).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END CERTIFICATE-----\n"
    }

    /// The SHA-256 pin of this certificate's public key.
    public var spkiPin: SPKIPin { SPKIPin(certificate: self) }

    /// SHA-256 over the whole DER certificate, as shown by `openssl x509 -fingerprint -sha256`.
    package var sha256Fingerprint: [UInt8] { Array(SHA256.hash(data: derBytes)) }

    /// The key type and size.
    package var publicKeyDescription: PublicKeyDescription {
        PublicKeyDescription(subjectPublicKeyInfoDER: subjectPublicKeyInfoDER)
    }

    /// Whether subject and issuer are the same name (a self-issued certificate; RFC 5280 §3.2).
    public var isSelfIssued: Bool { subject == issuer }

    /// The dNSName and iPAddress entries of the SAN extension, as text; `nil` when there
    /// is no SAN extension (or it cannot be parsed).
    public var subjectAlternativeNameStrings: [String]? {
        guard let sans = try? extensions.subjectAlternativeNames else { return nil }
        return sans.compactMap { name in
            switch name {
            case .dnsName(let dns): return dns
            case .ipAddress(let octets): return IPAddress(bytes: octets.bytes)?.description ?? "IP(\(octets.bytes.count) bytes)"
            case .rfc822Name(let mail): return "email:" + mail
            case .uniformResourceIdentifier(let uri): return "URI:" + uri
            default: return nil
            }
        }
    }
}

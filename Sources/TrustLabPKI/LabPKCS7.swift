import SwiftASN1
import X509

/// Certs-only CMS messages (RFC 5652 §5; `application/pkcs7-mime`, `.p7c`), as CAs publish issuer certificates at
/// their Authority Information Access locations: a ContentInfo holding a SignedData with no content and no signers,
/// only certificates.
package enum LabPKCS7 {
    /// The DER of a certs-only message holding `certificates`.
    package static func certsOnly(_ certificates: [Certificate]) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { info in
            try info.serialize(ASN1ObjectIdentifier(arrayLiteral: 1, 2, 840, 113_549, 1, 7, 2))
            try info.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)) { explicit in
                try explicit.appendConstructedNode(identifier: .sequence) { signed in
                    try signed.serialize(1)
                    signed.appendConstructedNode(identifier: .set) { _ in }
                    try signed.appendConstructedNode(identifier: .sequence) { encapsulated in
                        try encapsulated.serialize(ASN1ObjectIdentifier(arrayLiteral: 1, 2, 840, 113_549, 1, 7, 1))
                    }
                    try signed.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)) { set in
                        for certificate in certificates { try set.serialize(certificate) }
                    }
                    signed.appendConstructedNode(identifier: .set) { _ in }
                }
            }
        }
        return serializer.serializedBytes
    }
}

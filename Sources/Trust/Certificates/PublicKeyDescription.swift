import SwiftASN1
import X509

/// What kind of public key a certificate carries, read from its SubjectPublicKeyInfo.
package enum PublicKeyDescription: Hashable, Sendable, CustomStringConvertible {
    case rsa(bits: Int)
    case ecdsa(curve: String, bits: Int)
    case ed25519
    case other(algorithm: String)

    /// The strength in bits that minimum-key rules compare against (RSA modulus, EC field size).
    package var bits: Int? {
        switch self {
        case .rsa(let bits), .ecdsa(_, let bits): return bits
        case .ed25519: return 256
        case .other: return nil
        }
    }

    /// Human-readable form, such as `RSA 2048` or `ECDSA P-256`.
    package var description: String {
        switch self {
        case .rsa(let bits): return "RSA \(bits)"
        case .ecdsa(let curve, _): return "ECDSA \(curve)"
        case .ed25519: return "Ed25519"
        case .other(let oid): return "key algorithm \(oid)"
        }
    }

    static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 1]
    static let ecPublicKey: ASN1ObjectIdentifier = [1, 2, 840, 10045, 2, 1]
    static let ed25519OID: ASN1ObjectIdentifier = [1, 3, 101, 112]
    static let curves: [ASN1ObjectIdentifier: (String, Int)] = [
        [1, 2, 840, 10045, 3, 1, 7]: ("P-256", 256),
        [1, 3, 132, 0, 34]: ("P-384", 384),
        [1, 3, 132, 0, 35]: ("P-521", 521),
        [1, 3, 132, 0, 10]: ("secp256k1", 256),
        [1, 2, 840, 10045, 3, 1, 1]: ("P-192", 192),
        [1, 3, 132, 0, 33]: ("P-224", 224),
    ]

    /// Reads the key description from DER-encoded SubjectPublicKeyInfo.
    init(subjectPublicKeyInfoDER der: [UInt8]) {
        guard let root = try? DER.parse(der),
            case .constructed(let nodes) = root.content
        else {
            self = .other(algorithm: "unparseable")
            return
        }
        var iterator = nodes.makeIterator()
        guard let algorithmNode = iterator.next(), let keyNode = iterator.next(),
            case .constructed(let algorithmNodes) = algorithmNode.content
        else {
            self = .other(algorithm: "unparseable")
            return
        }
        var algorithmIterator = algorithmNodes.makeIterator()
        guard let oidNode = algorithmIterator.next(), let oid = try? ASN1ObjectIdentifier(derEncoded: oidNode) else {
            self = .other(algorithm: "unparseable")
            return
        }
        switch oid {
        case Self.rsaEncryption:
            guard let bits = try? ASN1BitString(derEncoded: keyNode),
                let rsaKey = try? DER.parse(Array(bits.bytes)),
                case .constructed(let rsaNodes) = rsaKey.content,
                let modulusNode = rsaNodes.first(where: { _ in true }),
                case .primitive(let modulus) = modulusNode.content
            else {
                self = .other(algorithm: "RSA (unparseable)")
                return
            }
            let significant = modulus.drop(while: { $0 == 0 })
            let leadingBits = significant.first.map { 8 - $0.leadingZeroBitCount } ?? 0
            self = .rsa(bits: max(0, (significant.count - 1) * 8 + leadingBits))
        case Self.ecPublicKey:
            if let curveNode = algorithmIterator.next(), let curve = try? ASN1ObjectIdentifier(derEncoded: curveNode) {
                let (name, bits) = Self.curves[curve] ?? ("curve \(curve)", 0)
                self = .ecdsa(curve: name, bits: bits)
            } else {
                self = .ecdsa(curve: "unnamed curve", bits: 0)
            }
        case Self.ed25519OID:
            self = .ed25519
        default:
            self = .other(algorithm: oid.description)
        }
    }
}

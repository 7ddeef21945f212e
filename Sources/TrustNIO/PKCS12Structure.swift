import SwiftASN1

/// What a PKCS#12 file holds, read from its structure without decrypting anything.
///
/// NIOSSL traps (`fatalError`) when a PKCS#12 yields a certificate without a private key, so a
/// file must be checked before it is handed over. OpenSSL (default and `-legacy`), Java's keytool
/// and macOS export the key in a shrouded key bag inside an *unencrypted* `data` content (the
/// certificates go into `encryptedData`), so counting the key bags found there is enough.
struct PKCS12Structure {
    var keyBags = 0
    var certificateBags = 0
    var encryptedContents = 0

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    static let data: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 1]
    static let encryptedData: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 6]
    static let envelopedData: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 3]
    static let keyBag: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 12, 10, 1, 1]
    static let shroudedKeyBag: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 12, 10, 1, 2]
    static let certBag: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 12, 10, 1, 3]

    init(der: [UInt8]) throws {
        let pfx = try DER.parse(der)
        let pfxItems = try Self.children(pfx, "PFX")
        guard pfxItems.count >= 2, (try? Int(derEncoded: pfxItems[0])) == 3 else { throw Malformed(description: "not a PKCS#12 version 3 PFX") }
        let (type, content) = try Self.contentInfo(pfxItems[1])
        guard type == Self.data, let content else { throw Malformed(description: "the authenticated safe is not plain data (public-key integrity mode is not supported)") }
        for info in try Self.children(try DER.parse(Self.octets(content)), "AuthenticatedSafe") {
            let (infoType, infoContent) = try Self.contentInfo(info)
            switch infoType {
            case Self.data:
                guard let infoContent else { continue }
                for bag in try Self.children(try DER.parse(Self.octets(infoContent)), "SafeContents") {
                    guard let first = try Self.children(bag, "SafeBag").first else { continue }
                    let bagID = try ASN1ObjectIdentifier(derEncoded: first)
                    if bagID == Self.keyBag || bagID == Self.shroudedKeyBag { keyBags += 1 }
                    if bagID == Self.certBag { certificateBags += 1 }
                }
            case Self.encryptedData, Self.envelopedData:
                encryptedContents += 1
            default:
                continue
            }
        }
    }

    static func children(_ node: ASN1Node, _ what: String) throws -> [ASN1Node] {
        guard case .constructed(let nodes) = node.content else { throw Malformed(description: "\(what) is not a SEQUENCE") }
        return Array(nodes)
    }

    /// ContentInfo ::= SEQUENCE { contentType OID, content [0] EXPLICIT ANY OPTIONAL }
    static func contentInfo(_ node: ASN1Node) throws -> (ASN1ObjectIdentifier, ASN1Node?) {
        let items = try children(node, "ContentInfo")
        guard let first = items.first else { throw Malformed(description: "empty ContentInfo") }
        let type = try ASN1ObjectIdentifier(derEncoded: first)
        guard items.count > 1 else { return (type, nil) }
        let wrapper = items[1]
        guard wrapper.identifier.tagClass == .contextSpecific, wrapper.identifier.tagNumber == 0,
            case .constructed(let inner) = wrapper.content, let value = inner.first(where: { _ in true })
        else { throw Malformed(description: "ContentInfo content is not [0] EXPLICIT") }
        return (type, value)
    }

    static func octets(_ node: ASN1Node) throws -> [UInt8] {
        guard node.identifier == .octetString, case .primitive(let bytes) = node.content else {
            throw Malformed(description: "expected an OCTET STRING (BER-constructed encodings are not supported)")
        }
        return Array(bytes)
    }
}

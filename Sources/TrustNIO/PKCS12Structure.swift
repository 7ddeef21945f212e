import SwiftASN1

/// What a PKCS#12 file holds, read from its structure without decrypting anything.
///
/// NIOSSL traps (`fatalError`) when a PKCS#12 yields a certificate without a private key, so a
/// file must be checked before it is handed over. OpenSSL (default and `-legacy`), Java's keytool
/// and macOS export the key in a shrouded key bag inside an *unencrypted* `data` content (the
/// certificates go into `encryptedData`), so counting the key bags found there is enough.
///
/// It also adds up the key-derivation iterations the file asks for where they can be seen without the passphrase
/// (``iterations``): the MAC's (RFC 7292 §4, `MacData.iterations`, default 1), each shrouded key bag's and each
/// encrypted content's (PKCS#12 PBE parameters, RFC 7292 appendix C; PBES1 and PBES2/PBKDF2 parameters, RFC 8018
/// §6.1, §6.2, appendix A.2). BoringSSL bounds each step (100 million iterations) but not their sum.
struct PKCS12Structure {
    var keyBags = 0
    var certificateBags = 0
    var encryptedContents = 0
    /// The key-derivation iterations seen (saturating): the MAC's, and every shrouded key bag's and encrypted
    /// content's. A shrouded key bag inside an encrypted content is not seen (at most one such derivation runs
    /// before BoringSSL refuses a second key): ``PKCS12Budget/timeLimit`` bounds it, by default too.
    var iterations = 0
    /// The MAC's iterations alone (BoringSSL computes the MAC twice for an empty passphrase).
    var macIterations = 0

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
        if pfxItems.count > 2 {
            // MacData ::= SEQUENCE { mac DigestInfo, macSalt OCTET STRING, iterations INTEGER DEFAULT 1 }
            let mac = try Self.children(pfxItems[2], "MacData")
            macIterations = mac.count > 2 ? Self.integer(mac[2]) : 1
            add(macIterations)
        }
        let (type, content) = try Self.contentInfo(pfxItems[1])
        guard type == Self.data, let content else {
            throw Malformed(description: "the authenticated safe is not plain data (public-key integrity mode is not supported)")
        }
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
                    if bagID == Self.shroudedKeyBag {
                        // SafeBag { bagId, bagValue [0] EXPLICIT EncryptedPrivateKeyInfo { AlgorithmIdentifier, OCTET STRING } }
                        let items = try Self.children(bag, "SafeBag")
                        guard items.count > 1, case .constructed(let wrapped) = items[1].content, let info = wrapped.first(where: { _ in true }),
                            let algorithm = try Self.children(info, "EncryptedPrivateKeyInfo").first
                        else { throw Malformed(description: "a shrouded key bag without its algorithm") }
                        add(try Self.iterations(of: algorithm))
                    }
                }
            case Self.encryptedData:
                encryptedContents += 1
                // EncryptedData { version, EncryptedContentInfo { contentType, AlgorithmIdentifier, [0] content } }
                guard let infoContent else { continue }
                let items = try Self.children(infoContent, "EncryptedData")
                guard items.count > 1 else { throw Malformed(description: "EncryptedData without its content") }
                let encrypted = try Self.children(items[1], "EncryptedContentInfo")
                guard encrypted.count > 1 else { throw Malformed(description: "EncryptedContentInfo without its algorithm") }
                add(try Self.iterations(of: encrypted[1]))
            case Self.envelopedData:
                encryptedContents += 1
            default:
                continue
            }
        }
    }

    /// Adds to ``iterations``, saturating.
    private mutating func add(_ count: Int) {
        let (sum, overflow) = iterations.addingReportingOverflow(count)
        iterations = overflow ? Int.max : sum
    }

    static let pkcs12PBE: [UInt] = [1, 2, 840, 113549, 1, 12, 1]
    static let pkcs5: [UInt] = [1, 2, 840, 113549, 1, 5]
    static let pbes2: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 5, 13]

    /// The iteration count of a password-based encryption algorithm: PKCS#12 PBE (`pkcs-12PbeParams { salt,
    /// iterations }`), PBES1 (`PBEParameter { salt, iterationCount }`) or PBES2 with PBKDF2 (`PBKDF2-params { salt,
    /// iterationCount, … }`); 0 for another algorithm (which BoringSSL refuses).
    static func iterations(of algorithm: ASN1Node) throws -> Int {
        let items = try children(algorithm, "AlgorithmIdentifier")
        guard let first = items.first else { throw Malformed(description: "an empty AlgorithmIdentifier") }
        let oid = try ASN1ObjectIdentifier(derEncoded: first)
        let arcs = Array(oid.oidComponents)
        guard items.count > 1 else { return 0 }
        if oid == pbes2 {
            // PBES2-params { keyDerivationFunc AlgorithmIdentifier { id-PBKDF2, PBKDF2-params }, encryptionScheme }
            guard let kdf = try children(items[1], "PBES2-params").first else { throw Malformed(description: "PBES2 without its key derivation") }
            let kdfItems = try children(kdf, "AlgorithmIdentifier")
            guard kdfItems.count > 1 else { throw Malformed(description: "PBKDF2 without its parameters") }
            let parameters = try children(kdfItems[1], "PBKDF2-params")
            guard parameters.count > 1 else { throw Malformed(description: "PBKDF2 without its iteration count") }
            return integer(parameters[1])
        }
        if arcs.starts(with: pkcs12PBE) || arcs.starts(with: pkcs5) {
            let parameters = try children(items[1], "PBE parameters")
            guard parameters.count > 1 else { throw Malformed(description: "PBE parameters without an iteration count") }
            return integer(parameters[1])
        }
        return 0
    }

    /// A non-negative INTEGER; one too large for an `Int` counts as `Int.max` (the budget refuses it).
    static func integer(_ node: ASN1Node) -> Int {
        guard node.identifier == .integer else { return Int.max }
        return (try? Int(derEncoded: node)).map { max($0, 0) } ?? Int.max
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

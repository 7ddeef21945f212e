import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An X.509 certificate revocation list (RFC 5280 §5), parsed from DER or PEM.
///
/// swift-certificates has no CRL type, so this one is parsed here with swift-asn1, strictly: any
/// structural error is a ``ParseError``. A CRL that parses but that RFC 5280 says must not be used —
/// no or a critical CRLNumber (§5.2.3), an unknown critical CRL or entry extension (§5.2, §5.3), an
/// indirect CRL (§5.2.5, not supported), a delta CRL (§5.2.4, not used) — keeps the reason in
/// `unusableReasons` and is never used to decide a certificate's status.
///
/// Looking a serial number up costs one hash of its bytes, whatever the list's size.
public struct CertificateRevocationList: Sendable, Hashable, CustomStringConvertible {
    /// Why a CRL lists a certificate (RFC 5280 §5.3.1).
    public enum Reason: Int, Sendable, Hashable, CustomStringConvertible {
        case unspecified = 0
        case keyCompromise = 1
        case caCompromise = 2
        case affiliationChanged = 3
        case superseded = 4
        case cessationOfOperation = 5
        case certificateHold = 6
        case removeFromCRL = 8
        case privilegeWithdrawn = 9
        case aaCompromise = 10

        /// RFC 5280's name of the reason.
        public var description: String {
            switch self {
            case .unspecified: return "unspecified"
            case .keyCompromise: return "keyCompromise"
            case .caCompromise: return "cACompromise"
            case .affiliationChanged: return "affiliationChanged"
            case .superseded: return "superseded"
            case .cessationOfOperation: return "cessationOfOperation"
            case .certificateHold: return "certificateHold"
            case .removeFromCRL: return "removeFromCRL"
            case .privilegeWithdrawn: return "privilegeWithdrawn"
            case .aaCompromise: return "aACompromise"
            }
        }
    }

    /// One revoked certificate.
    public struct Entry: Sendable, Hashable {
        /// The serial number's bytes as the CRL encodes them (DER INTEGER content: a leading 0x00 when the
        /// magnitude's first octet is 0x80 or more).
        package var serialNumber: [UInt8]
        /// When it was revoked.
        package var revocationDate: Date
        /// Why, when the CRL says (absent means `unspecified`, RFC 5280 §5.3.1).
        package var reason: Reason?
    }

    /// The scope a CRL declares in its Issuing Distribution Point extension (RFC 5280 §5.2.5).
    package struct IssuingDistributionPoint: Sendable, Hashable {
        /// The distribution point's full names (each a GeneralName's DER bytes); empty when none is named.
        package var fullNames: [[UInt8]]
        /// Whether a name relative to the CRL issuer is given instead of full names.
        package var hasRelativeName: Bool
        /// Only end-entity certificates are in scope.
        package var onlyContainsUserCerts: Bool
        /// Only CA certificates are in scope.
        package var onlyContainsCACerts: Bool
        /// Only some reasons are covered (the list is not a complete status for its scope).
        package var onlySomeReasons: Bool
        /// The CRL lists certificates of other issuers (not supported: such a CRL is not used).
        package var indirectCRL: Bool
        /// Only attribute certificates are in scope (so no public-key certificate is).
        package var onlyContainsAttributeCerts: Bool
    }

    /// The whole CRL, DER.
    public let derBytes: [UInt8]
    /// Who issued (and signed) it.
    package let issuer: DistinguishedName
    /// When it was issued.
    package let thisUpdate: Date
    /// When the next one will be issued; RFC 5280 §5.1.2.5 requires it (a CRL without it is unusable).
    package let nextUpdate: Date?
    /// The CRLNumber (RFC 5280 §5.2.3), as the integer's bytes; `nil` when absent.
    package let crlNumber: [UInt8]?
    /// The Authority Key Identifier's key identifier, when present.
    package let authorityKeyIdentifier: [UInt8]?
    /// Its scope, when it has an Issuing Distribution Point extension.
    package let issuingDistributionPoint: IssuingDistributionPoint?
    /// Whether it is a delta CRL (deltaCRLIndicator, RFC 5280 §5.2.4).
    package let isDelta: Bool
    /// Why RFC 5280 forbids using it to decide any certificate's status; empty when it may be used.
    package let unusableReasons: [String]
    /// The number of revoked certificates listed.
    package var count: Int { storage.entries.count }

    /// The signed part, its algorithm and the signature.
    let tbsBytes: ArraySlice<UInt8>
    let signatureAlgorithm: Certificate.SignatureAlgorithm?
    let signatureAlgorithmName: String
    let signature: [UInt8]
    private let storage: Storage

    /// The entries by serial number (leading zero octets removed), in a reference so copies share them.
    private final class Storage: Sendable {
        let entries: [SerialKey: Entry]
        init(entries: [SerialKey: Entry]) { self.entries = entries }
    }

    /// Stands for this CRL (and its copies) while it is alive.
    var identity: ObjectIdentifier { ObjectIdentifier(storage) }

    /// The entry for a serial number given as its big-endian magnitude (as `Certificate.SerialNumber.bytes`;
    /// leading zero octets are ignored), if the CRL lists it.
    package func entry(forSerialNumber serialNumber: [UInt8]) -> Entry? {
        storage.entries[SerialKey(magnitude: serialNumber[...])]
    }

    /// The entry for `certificate`'s serial number, if the CRL lists it (issuer not compared).
    package func entry(for certificate: Certificate) -> Entry? {
        storage.entries[SerialKey(magnitude: certificate.serialNumber.bytes[...])]
    }

    /// Whether `key` signed this CRL.
    package func isSigned(by key: Certificate.PublicKey) -> Bool {
        guard let signatureAlgorithm else { return false }
        return key.isValidSignature(signature, for: tbsBytes, signatureAlgorithm: signatureAlgorithm)
    }

    /// The issuer and update times, for messages.
    public var description: String {
        "CRL from \(issuer) (thisUpdate \(RFC3339.string(thisUpdate))\(nextUpdate.map { ", nextUpdate " + RFC3339.string($0) } ?? ""), \(count) entries)"
    }

    /// Equal when the DER is (the signatures, which differ between any two CRLs in practice, are compared first).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.signature == rhs.signature && lhs.derBytes == rhs.derBytes }
    /// Hashes the signature and the length (a list of 100,000 entries is not re-hashed whole).
    public func hash(into hasher: inout Hasher) {
        signature.withUnsafeBytes { hasher.combine(bytes: $0) }
        hasher.combine(derBytes.count)
    }

    /// A CRL from its DER encoding.
    public init(derEncoded bytes: [UInt8]) throws(ParseError) {
        do {
            self = try Self.parse(bytes)
        } catch let error as ParseError {
            throw error
        } catch {
            throw ParseError("not a DER CertificateList: \(error)")
        }
    }

    /// Every CRL in `data`: PEM blocks labelled `X509 CRL`, or one DER CRL.
    public static func parseAll(_ data: [UInt8]) throws(ParseError) -> [CertificateRevocationList] {
        if data.first == 0x30 { return [try CertificateRevocationList(derEncoded: data)] }
        guard let text = StrictUTF8.string(data) else { throw ParseError("neither DER nor PEM text") }
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: text)
        } catch {
            throw ParseError("not PEM: \(error)")
        }
        let crls = documents.filter { $0.discriminator == "X509 CRL" }
        guard !crls.isEmpty else { throw ParseError("no `X509 CRL` PEM block") }
        var parsed: [CertificateRevocationList] = []
        for (index, document) in crls.enumerated() {
            do {
                parsed.append(try CertificateRevocationList(derEncoded: document.derBytes))
            } catch {
                throw ParseError("CRL \(index + 1): \(error.detail)")
            }
        }
        return parsed
    }

    /// Every CRL in the file at `path` (PEM or DER).
    public static func load(path: String) throws(ParseError) -> [CertificateRevocationList] {
        let data: [UInt8]
        do {
            data = try LocalFile.read(path, limit: LocalFile.crlLimit)
        } catch {
            throw ParseError("\(path): cannot read the file: \(error.reason)")
        }
        do {
            return try parseAll(data)
        } catch {
            throw ParseError("\(path): \(error.detail)")
        }
    }

    /// A CRL that is not well-formed DER/PEM.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        public let detail: String
        init(_ detail: String) { self.detail = detail }
        public var description: String { "malformed CRL: \(detail)" }
    }

    private init(
        derBytes: [UInt8], issuer: DistinguishedName, thisUpdate: Date, nextUpdate: Date?, crlNumber: [UInt8]?, authorityKeyIdentifier: [UInt8]?,
        issuingDistributionPoint: IssuingDistributionPoint?, isDelta: Bool, unusableReasons: [String], tbsBytes: ArraySlice<UInt8>,
        signatureAlgorithm: Certificate.SignatureAlgorithm?, signatureAlgorithmName: String, signature: [UInt8], entries: [SerialKey: Entry]
    ) {
        self.derBytes = derBytes
        self.issuer = issuer
        self.thisUpdate = thisUpdate
        self.nextUpdate = nextUpdate
        self.crlNumber = crlNumber
        self.authorityKeyIdentifier = authorityKeyIdentifier
        self.issuingDistributionPoint = issuingDistributionPoint
        self.isDelta = isDelta
        self.unusableReasons = unusableReasons
        self.tbsBytes = tbsBytes
        self.signatureAlgorithm = signatureAlgorithm
        self.signatureAlgorithmName = signatureAlgorithmName
        self.signature = signature
        self.storage = Storage(entries: entries)
    }
}

/// A serial number as a dictionary key: its magnitude without leading zero octets, and its sign, hashed in bulk.
///
/// A certificate's serial (`Certificate.SerialNumber.bytes`) is a big-endian magnitude, with no DER sign octet;
/// a CRL entry's is DER INTEGER content, where a first octet ≥ 0x80 makes the number negative (RFC 5280 §4.1.2.2
/// forbids that, but a CRL may still say it). A negative entry never matches a certificate's serial.
struct SerialKey: Hashable, Sendable {
    let bytes: ArraySlice<UInt8>
    let negative: Bool

    /// The key of a certificate's serial number (a magnitude).
    init(magnitude bytes: ArraySlice<UInt8>) {
        self.bytes = Self.trimmed(bytes)
        self.negative = false
    }

    /// The key of DER INTEGER content (two's complement).
    init(integerContent bytes: ArraySlice<UInt8>) {
        self.negative = (bytes.first ?? 0) >= 0x80
        self.bytes = negative ? bytes : Self.trimmed(bytes)
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var trimmed = bytes
        while trimmed.count > 1, trimmed.first == 0 { trimmed = trimmed.dropFirst() }
        return trimmed
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.negative == rhs.negative && lhs.bytes.elementsEqual(rhs.bytes) }
    func hash(into hasher: inout Hasher) {
        hasher.combine(negative)
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

// MARK: - Parsing (RFC 5280 §5.1)

extension CertificateRevocationList {
    /// Object identifiers of the CRL and entry extensions this parser understands.
    enum OID {
        static let authorityKeyIdentifier: ASN1ObjectIdentifier = [2, 5, 29, 35]
        static let crlNumber: ASN1ObjectIdentifier = [2, 5, 29, 20]
        static let issuingDistributionPoint: ASN1ObjectIdentifier = [2, 5, 29, 28]
        static let deltaCRLIndicator: ASN1ObjectIdentifier = [2, 5, 29, 27]
        static let freshestCRL: ASN1ObjectIdentifier = [2, 5, 29, 46]
        static let issuerAltName: ASN1ObjectIdentifier = [2, 5, 29, 18]
        static let authorityInfoAccess: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 1, 1]
        static let reasonCode: ASN1ObjectIdentifier = [2, 5, 29, 21]
        static let invalidityDate: ASN1ObjectIdentifier = [2, 5, 29, 24]
        static let holdInstructionCode: ASN1ObjectIdentifier = [2, 5, 29, 23]
        static let certificateIssuer: ASN1ObjectIdentifier = [2, 5, 29, 29]
    }

    /// The signature algorithms swift-certificates verifies, by OID; RSA ones take NULL or absent parameters
    /// (RFC 4055 §5), ECDSA and Ed25519 none (RFC 5758 §3.2, RFC 8410 §3).
    static let algorithms: [ASN1ObjectIdentifier: (algorithm: Certificate.SignatureAlgorithm, name: String, nullParameters: Bool)] = [
        [1, 2, 840, 10045, 4, 3, 2]: (.ecdsaWithSHA256, "ecdsa-with-SHA256", false),
        [1, 2, 840, 10045, 4, 3, 3]: (.ecdsaWithSHA384, "ecdsa-with-SHA384", false),
        [1, 2, 840, 10045, 4, 3, 4]: (.ecdsaWithSHA512, "ecdsa-with-SHA512", false),
        [1, 2, 840, 113549, 1, 1, 5]: (.sha1WithRSAEncryption, "sha1WithRSAEncryption", true),
        [1, 2, 840, 113549, 1, 1, 11]: (.sha256WithRSAEncryption, "sha256WithRSAEncryption", true),
        [1, 2, 840, 113549, 1, 1, 12]: (.sha384WithRSAEncryption, "sha384WithRSAEncryption", true),
        [1, 2, 840, 113549, 1, 1, 13]: (.sha512WithRSAEncryption, "sha512WithRSAEncryption", true),
        [1, 3, 101, 112]: (.ed25519, "ED25519", false),
    ]

    private static func parse(_ bytes: [UInt8]) throws -> CertificateRevocationList {
        let root = try DER.parse(bytes)
        guard root.encodedBytes.count == bytes.count else { throw ParseError("bytes after the CertificateList") }
        return try DER.sequence(root, identifier: .sequence) { nodes in
            guard let tbsNode = nodes.next(), let algorithmNode = nodes.next(), let signatureNode = nodes.next() else {
                throw ParseError("a CertificateList is tbsCertList, signatureAlgorithm, signatureValue")
            }
            guard nodes.next() == nil else { throw ParseError("extra elements in the CertificateList") }
            let outerAlgorithm = algorithmNode.encodedBytes
            let signature = try ASN1BitString(derEncoded: signatureNode)
            guard signature.paddingBits == 0 else { throw ParseError("the signature is not a whole number of octets") }
            var parsed = try parseTBS(tbsNode, outerAlgorithm: outerAlgorithm)
            parsed.signature = Array(signature.bytes)
            return CertificateRevocationList(
                derBytes: bytes, issuer: parsed.issuer, thisUpdate: parsed.thisUpdate, nextUpdate: parsed.nextUpdate, crlNumber: parsed.crlNumber,
                authorityKeyIdentifier: parsed.authorityKeyIdentifier, issuingDistributionPoint: parsed.issuingDistributionPoint,
                isDelta: parsed.isDelta, unusableReasons: parsed.unusable, tbsBytes: tbsNode.encodedBytes,
                signatureAlgorithm: parsed.algorithm, signatureAlgorithmName: parsed.algorithmName, signature: parsed.signature,
                entries: parsed.entries)
        }
    }

    /// What the TBSCertList holds.
    private struct Parsed {
        var issuer = DistinguishedName()
        var thisUpdate = Date(timeIntervalSince1970: 0)
        var nextUpdate: Date?
        var crlNumber: [UInt8]?
        var authorityKeyIdentifier: [UInt8]?
        var issuingDistributionPoint: IssuingDistributionPoint?
        var isDelta = false
        var unusable: [String] = []
        var algorithm: Certificate.SignatureAlgorithm?
        var algorithmName = ""
        var signature: [UInt8] = []
        var entries: [SerialKey: Entry] = [:]
    }

    private static func parseTBS(_ node: ASN1Node, outerAlgorithm: ArraySlice<UInt8>) throws -> Parsed {
        try DER.sequence(node, identifier: .sequence) { nodes in
            var parsed = Parsed()
            guard var next = nodes.next() else { throw ParseError("an empty tbsCertList") }
            var version = 0
            if next.identifier == .integer {
                version = try Int(derEncoded: next)
                guard version == 1 else { throw ParseError("version \(version + 1); only v2 CRLs carry a version (RFC 5280 §5.1.2.1)") }
                guard let following = nodes.next() else { throw ParseError("a truncated tbsCertList") }
                next = following
            }
            // signature: the same AlgorithmIdentifier as the outer one (RFC 5280 §5.1.1.2).
            guard next.encodedBytes.elementsEqual(outerAlgorithm) else {
                throw ParseError("the signature algorithm inside the signed part differs from the outer one (RFC 5280 §5.1.1.2)")
            }
            (parsed.algorithm, parsed.algorithmName) = try algorithm(next, into: &parsed.unusable)
            guard let issuerNode = nodes.next() else { throw ParseError("no issuer") }
            parsed.issuer = try DistinguishedName(derEncoded: issuerNode)
            guard !parsed.issuer.isEmpty else { throw ParseError("an empty issuer name (RFC 5280 §5.1.2.3)") }
            guard let thisUpdateNode = nodes.next() else { throw ParseError("no thisUpdate") }
            parsed.thisUpdate = try time(thisUpdateNode)
            var element = nodes.next()
            if let candidate = element, candidate.identifier == .utcTime || candidate.identifier == .generalizedTime {
                parsed.nextUpdate = try time(candidate)
                element = nodes.next()
            }
            if let candidate = element, candidate.identifier == .sequence {
                try parseEntries(candidate, into: &parsed)
                element = nodes.next()
            }
            if let candidate = element, candidate.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                guard version == 1 else { throw ParseError("CRL extensions in a v1 CRL (RFC 5280 §5.1.2.1)") }
                try DER.explicitlyTagged(candidate, tagNumber: 0, tagClass: .contextSpecific) { extensionsNode in
                    try parseExtensions(extensionsNode, into: &parsed)
                }
                element = nodes.next()
            }
            guard element == nil else { throw ParseError("unexpected elements in the tbsCertList") }
            if parsed.nextUpdate == nil { parsed.unusable.append("it has no nextUpdate (RFC 5280 §5.1.2.5)") }
            if parsed.crlNumber == nil { parsed.unusable.append("it has no CRLNumber extension (RFC 5280 §5.2.3)") }
            return parsed
        }
    }

    private static func algorithm(_ node: ASN1Node, into unusable: inout [String]) throws -> (Certificate.SignatureAlgorithm?, String) {
        try DER.sequence(node, identifier: .sequence) { nodes in
            guard let oidNode = nodes.next() else { throw ParseError("an empty AlgorithmIdentifier") }
            let oid = try ASN1ObjectIdentifier(derEncoded: oidNode)
            let parameters = nodes.next()
            guard nodes.next() == nil else { throw ParseError("extra elements in an AlgorithmIdentifier") }
            guard let known = algorithms[oid] else {
                unusable.append("its signature algorithm \(oid) is not supported")
                return (nil, oid.description)
            }
            let parametersOK = parameters == nil || (known.nullParameters && parameters?.identifier == .null)
            guard parametersOK else { throw ParseError("unexpected parameters for \(known.name)") }
            return (known.algorithm, known.name)
        }
    }

    static func time(_ node: ASN1Node) throws -> Date {
        let components: (year: Int, month: Int, day: Int, hours: Int, minutes: Int, seconds: Int)
        switch node.identifier {
        case .utcTime:
            let time = try UTCTime(derEncoded: node)
            components = (time.year, time.month, time.day, time.hours, time.minutes, time.seconds)
        case .generalizedTime:
            let time = try GeneralizedTime(derEncoded: node)
            components = (time.year, time.month, time.day, time.hours, time.minutes, time.seconds)
        default:
            throw ParseError("a time that is neither UTCTime nor GeneralizedTime")
        }
        // Proleptic Gregorian days (RFC 5280 §4.1.2.5 times are ISO 8601's), as RFC3339 prints them.
        let day = CivilDate(year: Int64(components.year), month: Int64(components.month), day: Int64(components.day))
        guard day.isValid else { throw ParseError("an impossible date") }
        return day.date(secondsIntoDay: Double(components.hours * 3600 + components.minutes * 60 + components.seconds))
    }

    private static func parseEntries(_ node: ASN1Node, into parsed: inout Parsed) throws {
        var entries: [SerialKey: Entry] = [:]
        var unusable: [String] = []
        try DER.sequence(node, identifier: .sequence) { list in
            while let entryNode = list.next() {
                let entry = try parseEntry(entryNode, unusable: &unusable)
                entries[SerialKey(integerContent: entry.serialNumber[...])] = entry
            }
        }
        parsed.entries = entries
        var seen = Set<String>()
        parsed.unusable += unusable.filter { seen.insert($0).inserted }
    }

    private static func parseEntry(_ node: ASN1Node, unusable: inout [String]) throws -> Entry {
        try DER.sequence(node, identifier: .sequence) { nodes in
            guard let serialNode = nodes.next(), serialNode.identifier == .integer, case .primitive(let serial) = serialNode.content,
                let dateNode = nodes.next()
            else {
                throw ParseError("a revoked-certificate entry is userCertificate, revocationDate[, crlEntryExtensions]")
            }
            var entry = Entry(serialNumber: Array(serial), revocationDate: try time(dateNode), reason: nil)
            if let extensionsNode = nodes.next() {
                try parseEntryExtensions(extensionsNode, entry: &entry, unusable: &unusable)
            }
            guard nodes.next() == nil else { throw ParseError("extra elements in a revoked-certificate entry") }
            return entry
        }
    }

    private static func parseEntryExtensions(_ node: ASN1Node, entry: inout Entry, unusable: inout [String]) throws {
        for ext in try DER.sequence(of: Certificate.Extension.self, identifier: .sequence, rootNode: node) {
            switch ext.oid {
            case OID.reasonCode:
                // CRLReason ::= ENUMERATED: one content octet for every defined value.
                let value = try DER.parse(ext.value)
                guard value.identifier == ASN1Identifier(tagWithNumber: 10, tagClass: .universal), case .primitive(let bytes) = value.content,
                    bytes.count == 1, let code = bytes.first, let reason = Reason(rawValue: Int(code))
                else { throw ParseError("a malformed or unknown reason code") }
                entry.reason = reason
            case OID.invalidityDate, OID.holdInstructionCode:
                break
            case OID.certificateIssuer:
                unusable.append("an entry names another certificate issuer (an indirect CRL, not supported)")
            default:
                if ext.critical { unusable.append("an entry has the critical extension \(ext.oid), which is not understood (RFC 5280 §5.3)") }
            }
        }
    }

    private static func parseExtensions(_ node: ASN1Node, into parsed: inout Parsed) throws {
        var seen = Set<ASN1ObjectIdentifier>()
        for ext in try DER.sequence(of: Certificate.Extension.self, identifier: .sequence, rootNode: node) {
            guard seen.insert(ext.oid).inserted else { throw ParseError("the extension \(ext.oid) appears twice (RFC 5280 §4.2)") }
            switch ext.oid {
            case OID.crlNumber:
                let number = try DER.parse(ext.value)
                guard number.identifier == .integer, case .primitive(let bytes) = number.content else { throw ParseError("a CRLNumber that is not an INTEGER") }
                parsed.crlNumber = Array(bytes)
                if ext.critical { parsed.unusable.append("its CRLNumber extension is critical (RFC 5280 §5.2.3 requires non-critical)") }
            case OID.authorityKeyIdentifier:
                parsed.authorityKeyIdentifier = try AuthorityKeyIdentifier(ext).keyIdentifier.map { Array($0) }
            case OID.issuingDistributionPoint:
                parsed.issuingDistributionPoint = try issuingDistributionPoint(ext.value)
                if parsed.issuingDistributionPoint?.indirectCRL == true {
                    parsed.unusable.append("it is an indirect CRL (not supported)")
                }
            case OID.deltaCRLIndicator:
                parsed.isDelta = true
                parsed.unusable.append("it is a delta CRL (delta CRLs are not used)")
            case OID.freshestCRL, OID.issuerAltName, OID.authorityInfoAccess:
                break
            default:
                if ext.critical { parsed.unusable.append("it has the critical extension \(ext.oid), which is not understood (RFC 5280 §5.2)") }
            }
        }
    }

    /// IssuingDistributionPoint ::= SEQUENCE { distributionPoint [0] DistributionPointName OPTIONAL,
    /// onlyContainsUserCerts [1] BOOLEAN DEFAULT FALSE, onlyContainsCACerts [2] BOOLEAN DEFAULT FALSE,
    /// onlySomeReasons [3] ReasonFlags OPTIONAL, indirectCRL [4] BOOLEAN DEFAULT FALSE,
    /// onlyContainsAttributeCerts [5] BOOLEAN DEFAULT FALSE } (RFC 5280 §5.2.5; implicit tags, the CHOICE explicit).
    private static func issuingDistributionPoint(_ value: ArraySlice<UInt8>) throws -> IssuingDistributionPoint {
        var point = IssuingDistributionPoint(
            fullNames: [], hasRelativeName: false, onlyContainsUserCerts: false, onlyContainsCACerts: false, onlySomeReasons: false,
            indirectCRL: false, onlyContainsAttributeCerts: false)
        try DER.sequence(try DER.parse(value), identifier: .sequence) { nodes in
            while let node = nodes.next() {
                guard node.identifier.tagClass == .contextSpecific else { throw ParseError("an Issuing Distribution Point element without a context tag") }
                func flag() throws -> Bool {
                    guard case .primitive(let bytes) = node.content, bytes.count == 1 else { throw ParseError("a malformed Issuing Distribution Point flag") }
                    return bytes.first != 0
                }
                switch node.identifier.tagNumber {
                case 0:
                    (point.fullNames, point.hasRelativeName) = try distributionPointName(node)
                case 1: point.onlyContainsUserCerts = try flag()
                case 2: point.onlyContainsCACerts = try flag()
                case 3: point.onlySomeReasons = true
                case 4: point.indirectCRL = try flag()
                case 5: point.onlyContainsAttributeCerts = try flag()
                default: throw ParseError("an unknown Issuing Distribution Point element [\(node.identifier.tagNumber)]")
                }
            }
        }
        return point
    }

    /// DistributionPointName ::= CHOICE { fullName [0] GeneralNames, nameRelativeToCRLIssuer [1] RelativeDistinguishedName },
    /// inside an explicit [0]: the full names' DER elements, or that a relative name is used.
    static func distributionPointName(_ node: ASN1Node) throws -> (fullNames: [[UInt8]], relative: Bool) {
        guard case .constructed(let children) = node.content else { throw ParseError("a primitive distribution point name") }
        var iterator = children.makeIterator()
        guard let choice = iterator.next(), iterator.next() == nil, choice.identifier.tagClass == .contextSpecific else {
            throw ParseError("a malformed distribution point name")
        }
        switch choice.identifier.tagNumber {
        case 0:
            guard case .constructed(let names) = choice.content else { throw ParseError("a malformed fullName") }
            return (names.map { Array($0.encodedBytes) }, false)
        case 1:
            return ([], true)
        default:
            throw ParseError("an unknown distribution point name form")
        }
    }
}

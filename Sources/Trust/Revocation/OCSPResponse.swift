import Crypto
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An OCSP response that is not well-formed DER (RFC 6960 §4.2.1), or a request that is not (§4.1.1).
public struct OCSPParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    package let detail: String
    init(_ detail: String) { self.detail = detail }
    /// "malformed OCSP message: …".
    public var description: String { "malformed OCSP message: \(detail)" }

    /// Reads `version [0] EXPLICIT Version DEFAULT v1` (RFC 6960 §4.1.1, §4.2.1) when `node` is one: `true` when it
    /// was (and is v1), `false` when `node` is the next element instead.
    static func version(_ node: ASN1Node?, of what: String) throws -> Bool {
        guard let node, node.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) else { return false }
        let number = try DER.explicitlyTagged(node, tagNumber: 0, tagClass: .contextSpecific) { try Int(derEncoded: $0) }
        guard number == 0 else { throw OCSPParseError("\(what) version \(number + 1) (only v1 exists)") }
        return true
    }

    /// The nonce among `[tag] EXPLICIT Extensions` (RFC 8954: an OCTET STRING of 1 to 32 octets inside the extnValue).
    static func nonce(inExplicitExtensions node: ASN1Node, tagNumber: UInt) throws -> [UInt8]? {
        try DER.explicitlyTagged(node, tagNumber: tagNumber, tagClass: .contextSpecific) { list in
            var nonce: [UInt8]?
            var seen = Set<ASN1ObjectIdentifier>()
            for ext in try DER.sequence(of: Certificate.Extension.self, identifier: .sequence, rootNode: list) {
                guard seen.insert(ext.oid).inserted else { throw OCSPParseError("the extension \(ext.oid) appears twice") }
                guard ext.oid == OCSPRequest.nonceOID else { continue }
                let value = try ASN1OctetString(derEncoded: ext.value)
                nonce = Array(value.bytes)
            }
            return nonce
        }
    }
}

/// An OCSP response (RFC 6960 §4.2): its status, and for a successful one the basic response — what the responder
/// says about each certificate, when, signed by whom.
///
/// ```
/// OCSPResponse      ::= SEQUENCE { responseStatus OCSPResponseStatus, responseBytes [0] EXPLICIT ResponseBytes OPTIONAL }
/// ResponseBytes     ::= SEQUENCE { responseType OBJECT IDENTIFIER, response OCTET STRING }  -- id-pkix-ocsp-basic
/// BasicOCSPResponse ::= SEQUENCE { tbsResponseData ResponseData, signatureAlgorithm AlgorithmIdentifier,
///                                  signature BIT STRING, certs [0] EXPLICIT SEQUENCE OF Certificate OPTIONAL }
/// ResponseData      ::= SEQUENCE { version [0] EXPLICIT Version DEFAULT v1, responderID ResponderID,
///                                  producedAt GeneralizedTime, responses SEQUENCE OF SingleResponse,
///                                  responseExtensions [1] EXPLICIT Extensions OPTIONAL }
/// ResponderID       ::= CHOICE { byName [1] Name, byKey [2] KeyHash }
/// SingleResponse    ::= SEQUENCE { certID CertID, certStatus CertStatus, thisUpdate GeneralizedTime,
///                                  nextUpdate [0] EXPLICIT GeneralizedTime OPTIONAL, singleExtensions [1] EXPLICIT Extensions OPTIONAL }
/// CertStatus        ::= CHOICE { good [0] IMPLICIT NULL, revoked [1] IMPLICIT RevokedInfo, unknown [2] IMPLICIT UnknownInfo }
/// ```
///
/// Parsing checks the form only; ``verdict(for:issuer:at:nonce:)`` decides whether the response may be believed.
public struct OCSPResponse: Sendable, Hashable {
    /// The responseStatus (RFC 6960 §4.2.1).
    public enum Status: Int, Sendable, Hashable, CustomStringConvertible {
        case successful = 0
        case malformedRequest = 1
        case internalError = 2
        case tryLater = 3
        case signatureRequired = 5
        case unauthorized = 6

        /// The RFC's name.
        public var description: String {
            switch self {
            case .successful: "successful"
            case .malformedRequest: "malformedRequest"
            case .internalError: "internalError"
            case .tryLater: "tryLater"
            case .signatureRequired: "sigRequired"
            case .unauthorized: "unauthorized"
            }
        }
    }

    /// What the responder says about one certificate.
    package enum CertificateStatus: Sendable, Hashable {
        case good
        case revoked(at: Date, reason: CertificateRevocationList.Reason?)
        case unknown
    }

    /// One SingleResponse.
    package struct SingleResponse: Sendable, Hashable {
        /// Which certificate; `nil` when hashed with an algorithm this library does not know.
        package var certificateID: OCSPCertificateID?
        /// Its status.
        package var status: CertificateStatus
        /// When the status was known correct.
        package var thisUpdate: Date
        /// When newer information will be available.
        package var nextUpdate: Date?
    }

    /// Who signed: a name or the SHA-1 hash of a key (RFC 6960 §4.2.2.3).
    package enum ResponderID: Sendable, Hashable, CustomStringConvertible {
        case name(DistinguishedName)
        case keyHash([UInt8])

        /// The name, or "key " and the hash in hex.
        package var description: String {
            switch self {
            case .name(let name): "\(name)"
            case .keyHash(let hash): "key " + hash.hexText()
            }
        }
    }

    /// The responseStatus.
    public let status: Status
    /// The response as received.
    package let derBytes: [UInt8]
    /// Who signed (for a successful response).
    package let responderID: ResponderID?
    /// When the response was signed.
    package let producedAt: Date?
    /// The statuses.
    package let responses: [SingleResponse]
    /// Certificates the responder sent to help verify its signature (a delegated responder's certificate).
    package let certificates: [Certificate]
    /// The nonce of the responseExtensions, if any.
    package let nonce: [UInt8]?
    let tbsBytes: ArraySlice<UInt8>
    let signatureAlgorithm: Certificate.SignatureAlgorithm?
    let signatureAlgorithmName: String
    let signature: [UInt8]

    /// id-pkix-ocsp-basic (RFC 6960 §4.2.1).
    static let basicOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 48, 1, 1]
    /// id-kp-OCSPSigning (RFC 6960 §4.2.2.2).
    static let ocspSigningOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 5, 5, 7, 3, 9]

    /// How far in the future a response's `thisUpdate` or `producedAt` may be and still be used: responders sign on
    /// demand, and the two clocks are never exactly together (5 minutes).
    public static let clockSkewTolerance: TimeInterval = 300
    /// How long after `thisUpdate` a response without `nextUpdate` is used (RFC 6960 §4.2.2.1: without nextUpdate,
    /// newer information is always available; this library allows one day).
    public static let maximumAgeWithoutNextUpdate: TimeInterval = 86_400

    /// A response from its DER encoding.
    /// - Throws: ``OCSPParseError`` for anything but a well-formed response.
    public init(derEncoded bytes: [UInt8]) throws(OCSPParseError) {
        do {
            self = try Self.parse(bytes)
        } catch let error as OCSPParseError {
            throw error
        } catch let error as CertificateRevocationList.ParseError {
            throw OCSPParseError(error.detail)
        } catch {
            throw OCSPParseError("malformed DER: \(error)")
        }
    }

    /// Equal when the DER is.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.derBytes == rhs.derBytes }
    /// Hashes the DER.
    public func hash(into hasher: inout Hasher) { hasher.combine(derBytes) }

    /// The response about `certificate` (issued by `issuer`), if the responder gave one.
    package func singleResponse(for certificate: Certificate, issuer: Certificate) -> SingleResponse? {
        responses.first { $0.certificateID?.identifies(certificate, issuer: issuer) == true }
    }

    // MARK: - Deciding (RFC 6960 §3.2)

    /// What a response establishes about one certificate.
    public enum Verdict: Sendable, Hashable {
        /// The responder vouches for it until `validUntil`.
        case good(thisUpdate: Date, validUntil: Date)
        /// The responder says it is revoked.
        case revoked(at: Date, reason: CertificateRevocationList.Reason?, thisUpdate: Date)
        /// The response does not establish a status (the responder does not know it, or the response may not be used); why.
        case unknown(String)
    }

    /// What this response establishes about `certificate`, issued by `issuer` (the next certificate on a validated
    /// path), at `time` — checking it as RFC 6960 §3.2 says:
    /// 1. the status is successful and the response is a basic one with a SingleResponse for this certificate
    ///    (its CertID hashed with any of SHA-1/256/384/512);
    /// 2. the signature verifies with the key of the signer, which is the issuer itself or a responder it delegated
    ///    to (a certificate in the response issued and signed by the issuer, with extendedKeyUsage id-kp-OCSPSigning,
    ///    valid at `time`; its own revocation is not checked — as id-pkix-ocsp-nocheck advises clients, §4.2.2.2.1);
    ///    the responderID names that signer;
    /// 3. `thisUpdate` and `producedAt` are not later than `time` (with ``clockSkewTolerance``), and `time` is not
    ///    after `nextUpdate` (or ``maximumAgeWithoutNextUpdate`` after `thisUpdate` without one);
    /// 4. when `nonce` is given and the response carries a nonce, they are equal (a responder that ignores nonces and
    ///    answers with a pre-produced response is accepted, as RFC 8954 §3 allows).
    public func verdict(for certificate: Certificate, issuer: Certificate, at time: Date, nonce: [UInt8]? = nil) -> Verdict {
        verdict(for: certificate, issuer: issuer, at: time, nonce: nonce) { signatureProblem(issuer: issuer, at: time) }
    }

    /// ``verdict(for:issuer:at:nonce:)`` with the signature check given (the revocation rule remembers signers).
    func verdict(for certificate: Certificate, issuer: Certificate, at time: Date, nonce: [UInt8]?, signatureProblem: () -> String?) -> Verdict {
        guard status == .successful else { return .unknown("the responder answered \(status)") }
        guard let single = singleResponse(for: certificate, issuer: issuer) else {
            return .unknown("the response has no status for this certificate")
        }
        if let problem = signatureProblem() { return .unknown(problem) }
        if let producedAt, producedAt > time + Self.clockSkewTolerance {
            return .unknown("it was produced after the evaluation time (producedAt \(RFC3339.string(producedAt)))")
        }
        if single.thisUpdate > time + Self.clockSkewTolerance {
            return .unknown("it is from the future (thisUpdate \(RFC3339.string(single.thisUpdate)))")
        }
        let validUntil = single.nextUpdate ?? single.thisUpdate + Self.maximumAgeWithoutNextUpdate
        if validUntil < time {
            return .unknown(
                single.nextUpdate == nil
                    ? "it is stale: it has no nextUpdate and its thisUpdate \(RFC3339.string(single.thisUpdate)) is more than a day old"
                    : "it is stale: its nextUpdate \(RFC3339.string(validUntil)) has passed")
        }
        if let nonce, let echoed = self.nonce, echoed != nonce { return .unknown("its nonce is not the one sent") }
        switch single.status {
        case .good: return .good(thisUpdate: single.thisUpdate, validUntil: validUntil)
        case .revoked(let at, let reason): return .revoked(at: at, reason: reason, thisUpdate: single.thisUpdate)
        case .unknown: return .unknown("the responder does not know the certificate")
        }
    }

    /// Why the signature may not be believed, or `nil` when it was made by the issuer or a responder it authorised
    /// that is valid at `time`.
    func signatureProblem(issuer: Certificate, at time: Date) -> String? {
        switch signer(issuer: issuer) {
        case .failure(let problem):
            return problem.text
        case .success(let signer):
            guard signer.notValidBefore <= time, time <= signer.notValidAfter else {
                return "its responder certificate \(signer.displayName) is not valid at the evaluation time"
            }
            return nil
        }
    }

    /// A reason a response's signature is not believed.
    struct SignatureProblem: Error, Hashable {
        let text: String
    }

    /// The certificate whose key made the signature — `issuer` itself, or a responder certificate `issuer` issued for
    /// OCSP signing — or why there is none. Depends only on the response and the issuer (callers may remember it).
    func signer(issuer: Certificate) -> Result<Certificate, SignatureProblem> {
        guard let signatureAlgorithm else { return .failure(.init(text: "its signature algorithm \(signatureAlgorithmName) is not supported")) }
        func named(_ signer: Certificate) -> Bool {
            switch responderID {
            case .name(let name): return name == signer.subject
            case .keyHash(let hash): return hash == Array(Insecure.SHA1.hash(data: signer.publicKey.subjectPublicKeyInfoBytes))
            case nil: return false
            }
        }
        if named(issuer) {
            return issuer.publicKey.isValidSignature(signature, for: tbsBytes, signatureAlgorithm: signatureAlgorithm)
                ? .success(issuer) : .failure(.init(text: "it is not signed by the key of \(issuer.displayName)"))
        }
        guard let delegate = certificates.first(where: named) else {
            return .failure(
                .init(text: "it is signed by \(responderID?.description ?? "nobody"), neither \(issuer.displayName) nor a responder certificate it includes"))
        }
        guard delegate.issuer == issuer.subject, issuer.publicKey.isValidSignature(delegate.signature, for: delegate) else {
            return .failure(.init(text: "its responder certificate \(delegate.displayName) is not issued by \(issuer.displayName)"))
        }
        guard (try? delegate.extensions.extendedKeyUsage)??.contains(ExtendedKeyUsage.Usage(oid: Self.ocspSigningOID)) == true else {
            return .failure(.init(text: "its responder certificate \(delegate.displayName) lacks extendedKeyUsage id-kp-OCSPSigning (RFC 6960 §4.2.2.2)"))
        }
        return delegate.publicKey.isValidSignature(signature, for: tbsBytes, signatureAlgorithm: signatureAlgorithm)
            ? .success(delegate) : .failure(.init(text: "it is not signed by the key of its responder certificate \(delegate.displayName)"))
    }

    // MARK: - Parsing

    private init(
        status: Status, derBytes: [UInt8], responderID: ResponderID? = nil, producedAt: Date? = nil, responses: [SingleResponse] = [],
        certificates: [Certificate] = [], nonce: [UInt8]? = nil, tbsBytes: ArraySlice<UInt8> = [], signatureAlgorithm: Certificate.SignatureAlgorithm? = nil,
        signatureAlgorithmName: String = "", signature: [UInt8] = []
    ) {
        self.status = status
        self.derBytes = derBytes
        self.responderID = responderID
        self.producedAt = producedAt
        self.responses = responses
        self.certificates = certificates
        self.nonce = nonce
        self.tbsBytes = tbsBytes
        self.signatureAlgorithm = signatureAlgorithm
        self.signatureAlgorithmName = signatureAlgorithmName
        self.signature = signature
    }

    private static func parse(_ bytes: [UInt8]) throws -> OCSPResponse {
        let root = try DER.parse(bytes)
        guard root.encodedBytes.count == bytes.count else { throw OCSPParseError("bytes after the OCSPResponse") }
        return try DER.sequence(root, identifier: .sequence) { outer in
            guard let statusNode = outer.next(), statusNode.identifier == ASN1Identifier(tagWithNumber: 10, tagClass: .universal),
                case .primitive(let statusBytes) = statusNode.content, statusBytes.count == 1, let code = statusBytes.first
            else { throw OCSPParseError("no responseStatus ENUMERATED") }
            guard let status = Status(rawValue: Int(code)) else { throw OCSPParseError("the unknown responseStatus \(code)") }
            let bytesNode = outer.next()
            guard outer.next() == nil else { throw OCSPParseError("extra elements in the OCSPResponse") }
            guard status == .successful else {
                guard bytesNode == nil else { throw OCSPParseError("responseBytes in an unsuccessful response (RFC 6960 §4.2.1)") }
                return OCSPResponse(status: status, derBytes: bytes)
            }
            guard let bytesNode else { throw OCSPParseError("a successful response without responseBytes") }
            let basic: ArraySlice<UInt8> = try DER.explicitlyTagged(bytesNode, tagNumber: 0, tagClass: .contextSpecific) { node in
                try DER.sequence(node, identifier: .sequence) { parts in
                    guard let typeNode = parts.next(), let valueNode = parts.next(), parts.next() == nil else {
                        throw OCSPParseError("ResponseBytes is responseType, response")
                    }
                    let type = try ASN1ObjectIdentifier(derEncoded: typeNode)
                    guard type == basicOID else { throw OCSPParseError("the response type \(type) is not id-pkix-ocsp-basic") }
                    return try ASN1OctetString(derEncoded: valueNode).bytes
                }
            }
            return try parseBasic(Array(basic), whole: bytes)
        }
    }

    private static func parseBasic(_ bytes: [UInt8], whole: [UInt8]) throws -> OCSPResponse {
        let root = try DER.parse(bytes)
        guard root.encodedBytes.count == bytes.count else { throw OCSPParseError("bytes after the BasicOCSPResponse") }
        return try DER.sequence(root, identifier: .sequence) { parts in
            guard let tbsNode = parts.next(), let algorithmNode = parts.next(), let signatureNode = parts.next() else {
                throw OCSPParseError("a BasicOCSPResponse is tbsResponseData, signatureAlgorithm, signature")
            }
            let (algorithm, algorithmName) = try algorithm(algorithmNode)
            let signature = try ASN1BitString(derEncoded: signatureNode)
            guard signature.paddingBits == 0 else { throw OCSPParseError("the signature is not a whole number of octets") }
            var certificates: [Certificate] = []
            if let certsNode = parts.next() {
                certificates = try DER.explicitlyTagged(certsNode, tagNumber: 0, tagClass: .contextSpecific) { list in
                    try DER.sequence(of: Certificate.self, identifier: .sequence, rootNode: list)
                }
            }
            guard parts.next() == nil else { throw OCSPParseError("extra elements in the BasicOCSPResponse") }
            let data = try parseResponseData(tbsNode)
            return OCSPResponse(
                status: .successful, derBytes: whole, responderID: data.responder, producedAt: data.producedAt, responses: data.responses,
                certificates: certificates, nonce: data.nonce, tbsBytes: ArraySlice(Array(tbsNode.encodedBytes)), signatureAlgorithm: algorithm,
                signatureAlgorithmName: algorithmName, signature: Array(signature.bytes))
        }
    }

    private static func algorithm(_ node: ASN1Node) throws -> (Certificate.SignatureAlgorithm?, String) {
        try DER.sequence(node, identifier: .sequence) { nodes in
            guard let oidNode = nodes.next() else { throw OCSPParseError("an empty AlgorithmIdentifier") }
            let oid = try ASN1ObjectIdentifier(derEncoded: oidNode)
            let parameters = nodes.next()
            guard nodes.next() == nil else { throw OCSPParseError("extra elements in an AlgorithmIdentifier") }
            guard let known = CertificateRevocationList.algorithms[oid] else { return (nil, oid.description) }
            guard parameters == nil || (known.nullParameters && parameters?.identifier == .null) else {
                throw OCSPParseError("unexpected parameters for \(known.name)")
            }
            return (known.algorithm, known.name)
        }
    }

    private static func parseResponseData(_ node: ASN1Node) throws -> (responder: ResponderID, producedAt: Date, responses: [SingleResponse], nonce: [UInt8]?) {
        try DER.sequence(node, identifier: .sequence) { parts in
            var next = parts.next()
            if try OCSPParseError.version(next, of: "ResponseData") { next = parts.next() }
            guard let responderNode = next else { throw OCSPParseError("no responderID") }
            let responder: ResponderID
            switch (responderNode.identifier.tagClass, responderNode.identifier.tagNumber) {
            case (.contextSpecific, 1):
                responder = .name(try DER.explicitlyTagged(responderNode, tagNumber: 1, tagClass: .contextSpecific) { try DistinguishedName(derEncoded: $0) })
            case (.contextSpecific, 2):
                responder = .keyHash(
                    Array(try DER.explicitlyTagged(responderNode, tagNumber: 2, tagClass: .contextSpecific) { try ASN1OctetString(derEncoded: $0) }.bytes))
            default:
                throw OCSPParseError("a responderID that is neither byName [1] nor byKey [2]")
            }
            guard let producedNode = parts.next(), producedNode.identifier == .generalizedTime else { throw OCSPParseError("no producedAt GeneralizedTime") }
            let producedAt = try CertificateRevocationList.time(producedNode)
            guard let listNode = parts.next() else { throw OCSPParseError("no responses") }
            var responses: [SingleResponse] = []
            try DER.sequence(listNode, identifier: .sequence) { list in
                while let single = list.next() { responses.append(try parseSingle(single)) }
            }
            var nonce: [UInt8]?
            if let extensions = parts.next() {
                guard extensions.identifier == ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific) else {
                    throw OCSPParseError("unexpected elements in ResponseData")
                }
                nonce = try OCSPParseError.nonce(inExplicitExtensions: extensions, tagNumber: 1)
            }
            guard parts.next() == nil else { throw OCSPParseError("unexpected elements in ResponseData") }
            return (responder, producedAt, responses, nonce)
        }
    }

    private static func parseSingle(_ node: ASN1Node) throws -> SingleResponse {
        try DER.sequence(node, identifier: .sequence) { parts in
            guard let idNode = parts.next(), let statusNode = parts.next(), let thisNode = parts.next() else {
                throw OCSPParseError("a SingleResponse is certID, certStatus, thisUpdate…")
            }
            let id = try OCSPCertificateID.parse(idNode)
            let status: CertificateStatus
            guard statusNode.identifier.tagClass == .contextSpecific else { throw OCSPParseError("a certStatus without a context tag") }
            switch statusNode.identifier.tagNumber {
            case 0, 2:
                guard case .primitive(let content) = statusNode.content, content.isEmpty else {
                    throw OCSPParseError("a good or unknown certStatus that is not NULL")
                }
                status = statusNode.identifier.tagNumber == 0 ? .good : .unknown
            case 1:
                guard case .constructed(let children) = statusNode.content else { throw OCSPParseError("a primitive revoked certStatus") }
                var info = children.makeIterator()
                guard let timeNode = info.next(), timeNode.identifier == .generalizedTime else {
                    throw OCSPParseError("a revoked certStatus without revocationTime")
                }
                let at = try CertificateRevocationList.time(timeNode)
                var reason: CertificateRevocationList.Reason?
                if let reasonNode = info.next() {
                    reason = try DER.explicitlyTagged(reasonNode, tagNumber: 0, tagClass: .contextSpecific) { value in
                        guard value.identifier == ASN1Identifier(tagWithNumber: 10, tagClass: .universal), case .primitive(let bytes) = value.content,
                            bytes.count == 1, let code = bytes.first, let reason = CertificateRevocationList.Reason(rawValue: Int(code))
                        else { throw OCSPParseError("a malformed or unknown revocationReason") }
                        return reason
                    }
                }
                guard info.next() == nil else { throw OCSPParseError("extra elements in RevokedInfo") }
                status = .revoked(at: at, reason: reason)
            default:
                throw OCSPParseError("an unknown certStatus [\(statusNode.identifier.tagNumber)]")
            }
            guard thisNode.identifier == .generalizedTime else { throw OCSPParseError("a thisUpdate that is not GeneralizedTime") }
            let thisUpdate = try CertificateRevocationList.time(thisNode)
            var nextUpdate: Date?
            var element = parts.next()
            if let candidate = element, candidate.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                nextUpdate = try DER.explicitlyTagged(candidate, tagNumber: 0, tagClass: .contextSpecific) { node in
                    guard node.identifier == .generalizedTime else { throw OCSPParseError("a nextUpdate that is not GeneralizedTime") }
                    return try CertificateRevocationList.time(node)
                }
                element = parts.next()
            }
            if let candidate = element, candidate.identifier == ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific) {
                // singleExtensions: a critical one not understood makes the response unusable for this certificate.
                let critical = try DER.explicitlyTagged(candidate, tagNumber: 1, tagClass: .contextSpecific) { list in
                    try DER.sequence(of: Certificate.Extension.self, identifier: .sequence, rootNode: list).contains(where: \.critical)
                }
                if critical { throw OCSPParseError("a SingleResponse with a critical extension") }
                element = parts.next()
            }
            guard element == nil else { throw OCSPParseError("unexpected elements in a SingleResponse") }
            return SingleResponse(certificateID: id, status: status, thisUpdate: thisUpdate, nextUpdate: nextUpdate)
        }
    }
}

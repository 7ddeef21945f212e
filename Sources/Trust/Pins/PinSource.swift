import Crypto
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Everything that carries a public key to pin, read from PEM or DER: certificates, public keys
/// (SubjectPublicKeyInfo), private keys (the public half: PKCS#8, SEC 1 and PKCS#1), and
/// certificate requests (PKCS#10).
///
/// Pinning a backup key that has no certificate yet is the recommended practice (RFC 7469 §4.3;
/// OWASP's pinning guidance), so a key or a CSR must be enough. Each pin is SHA-256 over the
/// SubjectPublicKeyInfo DER, as
/// `openssl pkey -pubout -outform der | openssl dgst -sha256 -binary | base64` computes it: taken
/// from the input's own bytes for certificates, public keys and requests, derived for private keys.
package enum PinSource {
    /// What a pin was read from.
    package enum Kind: String, Sendable, Hashable {
        case certificate
        case publicKey = "package-key"
        case privateKey = "private-key"
        case certificateRequest = "certificate-request"
    }

    /// One pinnable item.
    package struct Entry: Sendable, Hashable {
        /// The SPKI SHA-256 pin.
        package var pin: SPKIPin
        /// What it was read from.
        package var kind: Kind
        /// The subject (certificates and requests) or the key's type (keys).
        package var subject: String

        /// An entry.
        package init(pin: SPKIPin, kind: Kind, subject: String) {
            self.pin = pin
            self.kind = kind
            self.subject = subject
        }
    }

    /// Reads every pinnable item of a file's bytes (PEM blocks of any of the four kinds, or one DER
    /// item). Other PEM blocks (parameters, CRLs…) are skipped; an encrypted private key is refused
    /// with a reason, as is input holding nothing to pin.
    package static func entries(bytes: [UInt8], source: String = "<memory>") throws(CertificateLoadingError) -> [Entry] {
        if bytes.first == 0x30 { return [try entry(der: bytes, source: source)] }
        let documents: [PEMDecoder.Document]
        do throws(PEMDecoder.Failure) {
            documents = try bytes.withUnsafeBufferPointer { buffer throws(PEMDecoder.Failure) in try PEMDecoder.documents(in: buffer) }
        } catch {
            switch error {
            case .unterminated(let block): throw CertificateLoadingError(source: source, kind: .unterminatedPEMBlock(block: block))
            case .invalidBase64(let block): throw CertificateLoadingError(source: source, kind: .invalidBase64(block: block))
            }
        }
        var result: [Entry] = []
        for (index, document) in documents.enumerated() {
            let block = index + 1
            guard let der = document.der else { throw CertificateLoadingError(source: source, kind: .invalidBase64(block: block)) }
            switch document.label {
            case "CERTIFICATE", "TRUSTED CERTIFICATE", "X509 CERTIFICATE":
                let certificate = try CertificateSource.entry(der: der, source: source, block: block)
                result.append(Entry(pin: certificate.spkiPin, kind: .certificate, subject: certificate.subject))
            case "PUBLIC KEY":
                result.append(try publicKey(der, source: source, block: block))
            case "PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY":
                result.append(try privateKey(PEMDocument(type: document.label, derBytes: der), source: source, block: block))
            case "CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST":
                result.append(try request(der, source: source, block: block))
            case "ENCRYPTED PRIVATE KEY":
                throw CertificateLoadingError(
                    source: source,
                    kind: .unpinnable(
                        block: block, detail: "the private key is encrypted: pin its public key (openssl pkey -in KEY -pubout) or its certificate"))
            default:
                continue
            }
        }
        if result.isEmpty { throw CertificateLoadingError(source: source, kind: .noCertificates) }
        return result
    }

    /// One DER item: a certificate, a SubjectPublicKeyInfo, a private key (PKCS#8, SEC 1, PKCS#1) or a
    /// PKCS#10 request.
    static func entry(der: [UInt8], source: String) throws(CertificateLoadingError) -> Entry {
        if let raw = RawCertificate(der: der) {
            let subject = (try? Certificate(derEncoded: der)).map { $0.subject.description } ?? raw.subject ?? ""
            return Entry(pin: raw.spkiPin, kind: .certificate, subject: subject)
        }
        if isSubjectPublicKeyInfo(ArraySlice(der)) { return try publicKey(der, source: source, block: nil) }
        if let request = try? request(der, source: source, block: nil) { return request }
        // A DER private key says nothing of its form: PKCS#8, SEC 1 and PKCS#1 are tried in turn.
        for label in ["PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY"] {
            if let key = try? privateKey(PEMDocument(type: label, derBytes: der), source: source, block: nil) { return key }
        }
        throw CertificateLoadingError(
            source: source,
            kind: .unpinnable(
                block: nil, detail: "not a certificate, public key, private key or certificate request"))
    }

    private static func publicKey(_ der: [UInt8], source: String, block: Int?) throws(CertificateLoadingError) -> Entry {
        guard isSubjectPublicKeyInfo(ArraySlice(der)) else {
            throw CertificateLoadingError(source: source, kind: .unpinnable(block: block, detail: "not a SubjectPublicKeyInfo"))
        }
        return Entry(
            pin: SPKIPin(subjectPublicKeyInfoDER: der), kind: .publicKey, subject: "public key (\(PublicKeyDescription(subjectPublicKeyInfoDER: der)))")
    }

    private static func privateKey(_ document: PEMDocument, source: String, block: Int?) throws(CertificateLoadingError) -> Entry {
        let key: Certificate.PrivateKey
        do {
            key = try Certificate.PrivateKey(pemDocument: document)
        } catch {
            throw CertificateLoadingError(source: source, kind: .unpinnable(block: block, detail: "the private key cannot be read: \(error)"))
        }
        var serializer = DER.Serializer()
        do {
            try serializer.serialize(key.publicKey)
        } catch {
            throw CertificateLoadingError(source: source, kind: .unpinnable(block: block, detail: "the public key cannot be encoded: \(error)"))
        }
        let spki = serializer.serializedBytes
        return Entry(
            pin: SPKIPin(subjectPublicKeyInfoDER: spki), kind: .privateKey,
            subject: "public half of a private key (\(PublicKeyDescription(subjectPublicKeyInfoDER: spki)))")
    }

    /// CertificationRequest ::= SEQUENCE { CertificationRequestInfo ::= SEQUENCE { version, subject,
    /// subjectPKInfo, [0] attributes }, signatureAlgorithm, signature } (RFC 2986 §4): the SPKI's own bytes.
    private static func request(_ der: [UInt8], source: String, block: Int?) throws(CertificateLoadingError) -> Entry {
        let bytes = ArraySlice(der)
        guard bytes.first == 0x30, let outer = DERWalker.element(in: bytes, at: bytes.startIndex), outer.end == bytes.endIndex,
            bytes[outer.contentStart] == 0x30, let info = DERWalker.element(in: bytes, at: outer.contentStart),
            let version = DERWalker.element(in: bytes, at: info.contentStart), bytes[info.contentStart] == 0x02,
            let subject = DERWalker.element(in: bytes, at: version.end), bytes[version.end] == 0x30,
            let spki = DERWalker.element(in: bytes, at: subject.end), spki.end <= info.end,
            isSubjectPublicKeyInfo(bytes[subject.end..<spki.end])
        else {
            throw CertificateLoadingError(source: source, kind: .unpinnable(block: block, detail: "not a PKCS#10 certificate request"))
        }
        let name = (try? DistinguishedName(derEncoded: DER.parse(Array(bytes[version.end..<subject.end]))))?.description ?? ""
        return Entry(
            pin: SPKIPin(subjectPublicKeyInfoDER: bytes[subject.end..<spki.end]), kind: .certificateRequest,
            subject: "certificate request \(name)")
    }

    /// SubjectPublicKeyInfo ::= SEQUENCE { AlgorithmIdentifier SEQUENCE { OID, … }, BIT STRING }, nothing after.
    static func isSubjectPublicKeyInfo(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.first == 0x30, let outer = DERWalker.element(in: bytes, at: bytes.startIndex), outer.end == bytes.endIndex,
            outer.contentStart < outer.end, bytes[outer.contentStart] == 0x30,
            let algorithm = DERWalker.element(in: bytes, at: outer.contentStart),
            algorithm.contentStart < algorithm.end, bytes[algorithm.contentStart] == 0x06,
            algorithm.end < outer.end, bytes[algorithm.end] == 0x03,
            let key = DERWalker.element(in: bytes, at: algorithm.end), key.end == outer.end
        else { return false }
        return true
    }
}

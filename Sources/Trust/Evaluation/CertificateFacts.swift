import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the path rules need to know about one certificate, worked out once per certificate
/// instead of once per rule and candidate path: its extensions parsed, its key described and
/// pinned, its self-issued status, its validity as dates.
///
/// Every value is derived from the certificate's TBSCertificate alone, so facts are shared by
/// byte-identical TBSCertificates (`CertificateFactsCache`) — the same idea as OpenSSL keeping
/// decoded extensions inside its `X509` object after the first verification. A parse error is
/// kept as the error's text, so a rule reports it exactly as it would have parsing itself.
public final class CertificateFacts: Sendable {
    /// A failure to parse an extension, with the parser's message.
    package struct ExtensionError: Error, Sendable, CustomStringConvertible {
        /// The parser's message.
        package let description: String
    }

    /// The parsed basicConstraints extension (`nil` when absent).
    package let basicConstraints: Result<BasicConstraints?, ExtensionError>
    /// The parsed keyUsage extension.
    package let keyUsage: Result<KeyUsage?, ExtensionError>
    /// The parsed extendedKeyUsage extension.
    package let extendedKeyUsage: Result<ExtendedKeyUsage?, ExtensionError>
    /// The parsed authorityKeyIdentifier extension.
    package let authorityKeyIdentifier: Result<AuthorityKeyIdentifier?, ExtensionError>
    /// The parsed subjectKeyIdentifier extension.
    package let subjectKeyIdentifier: Result<SubjectKeyIdentifier?, ExtensionError>
    /// The parsed subjectAltName extension.
    package let subjectAlternativeNames: Result<SubjectAlternativeNames?, ExtensionError>
    /// The SHA-256 pin of the certificate's SubjectPublicKeyInfo.
    package let spkiPin: SPKIPin
    /// The key type and size.
    package let publicKey: PublicKeyDescription
    /// Subject and issuer are the same name (RFC 5280 §3.2).
    package let isSelfIssued: Bool
    /// basicConstraints says cA = TRUE.
    package let isCertificateAuthority: Bool
    /// The start of the validity period.
    package let notValidBefore: Date
    /// The end of the validity period.
    package let notValidAfter: Date
    /// The OIDs of the critical extensions, in certificate order.
    package let criticalExtensions: [ASN1ObjectIdentifier]
    /// Whether the certificate carries a nameConstraints extension.
    package let hasNameConstraints: Bool
    /// The authorityKeyIdentifier carries a keyIdentifier.
    package let hasAuthorityKeyIdentifierKeyID: Bool
    /// A subjectKeyIdentifier is present.
    package let hasSubjectKeyIdentifier: Bool
    /// For a self-issued certificate with both key identifiers: why they disagree (RFC 5280
    /// §4.2.1.1: a root's authorityKeyIdentifier names its own key), else `nil`.
    package let selfIssuedKeyIdentifierProblem: String?
    /// The subjectAltName's dNSNames as ``HostnameMatcher`` compares them (lower-cased; `nil`
    /// for a name that can never match), and its iPAddress octets.
    package let presentedDNSNames: [String?]
    /// See ``presentedDNSNames``.
    package let presentedIPAddresses: [[UInt8]]
    /// The subject is the empty sequence.
    package let hasEmptySubject: Bool
    /// The serial number is longer than 20 octets or zero (RFC 5280 §4.1.2.2), as a phrase.
    package let serialNumberProblem: String?
    /// An authorityInformationAccess extension is present but malformed or empty.
    package let hasMalformedAuthorityInformationAccess: Bool
    /// The criticality of these extensions; `nil` when absent.
    package let basicConstraintsIsCritical: Bool?
    /// See ``basicConstraintsIsCritical``.
    package let policyConstraintsIsCritical: Bool?
    /// See ``basicConstraintsIsCritical``.
    package let extendedKeyUsageIsCritical: Bool?
    /// See ``basicConstraintsIsCritical``.
    package let subjectAlternativeNameIsCritical: Bool?

    /// Works out the facts of `certificate` (prefer the process's `CertificateFactsCache`).
    package init(_ certificate: Certificate) {
        func parsed<T>(_ body: () throws -> T?) -> Result<T?, ExtensionError> {
            do { return .success(try body()) } catch { return .failure(ExtensionError(description: "\(error)")) }
        }
        let extensions = certificate.extensions
        basicConstraints = parsed { try extensions.basicConstraints }
        keyUsage = parsed { try extensions.keyUsage }
        extendedKeyUsage = parsed { try extensions.extendedKeyUsage }
        authorityKeyIdentifier = parsed { try extensions.authorityKeyIdentifier }
        subjectKeyIdentifier = parsed { try extensions.subjectKeyIdentifier }
        subjectAlternativeNames = parsed { try extensions.subjectAlternativeNames }
        let spki = certificate.subjectPublicKeyInfoDER
        spkiPin = SPKIPin(subjectPublicKeyInfoDER: spki)
        publicKey = PublicKeyDescription(subjectPublicKeyInfoDER: spki)
        isSelfIssued = certificate.subject == certificate.issuer
        if case .success(.isCertificateAuthority?) = basicConstraints { isCertificateAuthority = true } else { isCertificateAuthority = false }
        notValidBefore = certificate.notValidBefore
        notValidAfter = certificate.notValidAfter
        criticalExtensions = extensions.filter(\.critical).map(\.oid)
        hasNameConstraints = extensions[oid: .X509ExtensionID.nameConstraints] != nil
        let aki = try? authorityKeyIdentifier.get()
        let ski = try? subjectKeyIdentifier.get()
        hasAuthorityKeyIdentifierKeyID = aki?.keyIdentifier != nil
        hasSubjectKeyIdentifier = ski != nil
        if isSelfIssued, let ski, let aki {
            selfIssuedKeyIdentifierProblem =
                aki.keyIdentifier == nil
                ? "a root's authorityKeyIdentifier has no keyIdentifier"
                : aki.keyIdentifier != ski.keyIdentifier ? "a self-signed root's authorityKeyIdentifier differs from its subjectKeyIdentifier" : nil
        } else {
            selfIssuedKeyIdentifierProblem = nil
        }
        var dnsNames: [String?] = []
        var ipAddresses: [[UInt8]] = []
        if case .success(let names?) = subjectAlternativeNames {
            for name in names {
                switch name {
                case .dnsName(let presented): dnsNames.append(HostnameMatcher.normalisePresented(presented))
                case .ipAddress(let octets): ipAddresses.append(Array(octets.bytes))
                default: continue
                }
            }
        }
        presentedDNSNames = dnsNames
        presentedIPAddresses = ipAddresses
        hasEmptySubject = certificate.subject.isEmpty
        let serial = certificate.serialNumber.bytes
        serialNumberProblem =
            serial.count > 20
            ? "the serial number is longer than 20 octets"
            : serial.allSatisfy({ $0 == 0 }) ? "the serial number is zero" : nil
        if let aia = extensions[oid: .X509ExtensionID.authorityInformationAccess] {
            let parsed = try? AuthorityInformationAccess(aia)
            hasMalformedAuthorityInformationAccess = parsed == nil || parsed?.isEmpty == true
        } else {
            hasMalformedAuthorityInformationAccess = false
        }
        basicConstraintsIsCritical = extensions[oid: .X509ExtensionID.basicConstraints]?.critical
        policyConstraintsIsCritical = extensions[oid: [2, 5, 29, 36]]?.critical
        extendedKeyUsageIsCritical = extensions[oid: .X509ExtensionID.extendedKeyUsage]?.critical
        subjectAlternativeNameIsCritical = extensions[oid: .X509ExtensionID.subjectAlternativeName]?.critical
    }

    /// Whether a critical extension is not among `handled` (RFC 5280 §4.2: such a certificate is refused).
    package func hasUnhandledCriticalExtension(_ handled: [ASN1ObjectIdentifier]) -> Bool {
        criticalExtensions.contains { !handled.contains($0) }
    }
}

/// The process's ``CertificateFacts``, by TBSCertificate bytes: a bounded map (least recently
/// used dropped first), so a server's chain or a trust store's root is examined once, not on
/// every evaluation. Looking one up costs a bulk hash of the TBSCertificate (~0.1 µs for 1 KB).
package final class CertificateFactsCache: @unchecked Sendable {
    /// The shared cache (4,096 certificates).
    package static let shared = CertificateFactsCache(capacity: 4096)

    private let capacity: Int
    private let lock = Lock()
    private var entries = LRUDictionary<BulkBytes, CertificateFacts>()

    /// Creates a cache holding at most `capacity` certificates' facts.
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The facts of `certificate`, worked out on first use.
    package func facts(of certificate: Certificate) -> CertificateFacts {
        let key = BulkBytes(certificate.tbsCertificateBytes)
        lock.lock()
        let known = entries.use(key)
        lock.unlock()
        if let known { return known }
        let facts = CertificateFacts(certificate)
        lock.lock()
        entries.set(key, facts, capacity: capacity)
        lock.unlock()
        return facts
    }

    /// The facts of each certificate (one lock for the whole list).
    package func facts(of certificates: [Certificate]) -> [CertificateFacts] {
        var result: [CertificateFacts?] = []
        result.reserveCapacity(certificates.count)
        lock.lock()
        for certificate in certificates {
            result.append(entries.use(BulkBytes(certificate.tbsCertificateBytes)))
        }
        lock.unlock()
        var made: [(BulkBytes, CertificateFacts)] = []
        for index in result.indices where result[index] == nil {
            let facts = CertificateFacts(certificates[index])
            result[index] = facts
            made.append((BulkBytes(certificates[index].tbsCertificateBytes), facts))
        }
        if !made.isEmpty {
            lock.lock()
            for (key, facts) in made { entries.set(key, facts, capacity: capacity) }
            lock.unlock()
        }
        return result.compactMap { $0 }
    }

    /// How many certificates' facts are kept.
    package var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }
}

/// Bytes (a TBSCertificate, a subject name) as a dictionary key, hashed in bulk (an array slice's own hash goes
/// byte by byte); equality compares every byte.
package struct BulkBytes: Hashable, Sendable {
    package let bytes: ArraySlice<UInt8>

    package init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    package func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    package static func == (lhs: BulkBytes, rhs: BulkBytes) -> Bool {
        guard lhs.bytes.count == rhs.bytes.count else { return false }
        return lhs.bytes.withUnsafeBytes { left in
            rhs.bytes.withUnsafeBytes { right in
                guard let l = left.baseAddress, let r = right.baseAddress else { return true }
                return memcmp(l, r, left.count) == 0
            }
        }
    }
}

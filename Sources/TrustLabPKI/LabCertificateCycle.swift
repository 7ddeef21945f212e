import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Two CAs that certify each other — A issues a certificate for B, B one for A — and a leaf
/// issued by B, for tests that path building terminates on a cycle.
///
/// Presented as ``presentedChain`` (leaf, B-by-A, A-by-B) every issuer lookup finds another
/// certificate of the cycle: without an anchor there is no path (and the search must end); with
/// ``rootA`` or ``rootB`` (the CAs' self-signed certificates, same names and keys) as the anchor
/// a valid path exists.
package struct LabCertificateCycle: Sendable {
    /// CA A, self-signed.
    package let rootA: LabAuthority
    /// CA B, self-signed.
    package let rootB: LabAuthority
    /// B's name and key, issued by A.
    package let bByA: Certificate
    /// A's name and key, issued by B.
    package let aByB: Certificate
    /// The leaf, issued by B, for ``host``.
    package let leaf: LabIdentity
    /// The name in the leaf's subjectAltName.
    package let host: String

    /// The leaf, then both cross-certificates.
    package var presentedChain: [Certificate] { [leaf.certificate, bByA, aByB] }

    /// Makes the two CAs, their cross-certificates and a leaf for `host`.
    package static func make(host: String = "cycle.lab.test", keyType: LabKeyType = .p256, now: Date = Date()) throws -> LabCertificateCycle {
        let day: TimeInterval = 86_400
        let a = try LabAuthority.root(commonName: "swift-trust Lab Cycle CA A", keyType: keyType, notBefore: now - day, notAfter: now + 3650 * day)
        let b = try LabAuthority.root(commonName: "swift-trust Lab Cycle CA B", keyType: keyType, notBefore: now - day, notAfter: now + 3650 * day)
        let bByA = try a.crossCertificate(for: b, notBefore: now - day, notAfter: now + 1825 * day)
        let aByB = try b.crossCertificate(for: a, notBefore: now - day, notAfter: now + 1825 * day)
        let leaf = try b.leaf(dnsNames: [host], keyType: keyType, notBefore: now - day, notAfter: now + 90 * day)
        return LabCertificateCycle(rootA: a, rootB: b, bByA: bByA, aByB: aByB, leaf: leaf, host: host)
    }
}

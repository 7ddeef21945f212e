import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A leaf with a very large subjectAltName (10,000 dNSNames by default), issued directly by its
/// own root — for tests of name matching cost and of certificate-size limits.
///
/// Names are `n0.SUFFIX`, `n1.SUFFIX`…: with a one-letter suffix 10,000 names take about 90 KB
/// (under BoringSSL's default 100 KB limit on a handshake message, so a client does receive the
/// chain); with a longer suffix the certificate grows past it.
package struct LabManyNamesLeaf: Sendable {
    /// The issuing root (an anchor for the test; not presented).
    package let root: LabAuthority
    /// The leaf.
    package let identity: LabIdentity
    /// The leaf's dNSNames, in order.
    package let names: [String]

    /// What a server presents: the leaf alone.
    package var presentedChain: [Certificate] { [identity.certificate] }

    /// The leaf's DER size, in bytes.
    package var certificateSize: Int { identity.certificate.derBytes.count }

    /// The DNS name `n<index>.<suffix>` of this leaf's naming scheme.
    package static func name(_ index: Int, suffix: String) -> String { "n\(index).\(suffix)" }

    /// Makes a leaf with `count` dNSNames `n0.SUFFIX` … `n<count-1>.SUFFIX`.
    package static func make(count: Int = 10_000, suffix: String = "s", keyType: LabKeyType = .p256, now: Date = Date()) throws -> LabManyNamesLeaf {
        let day: TimeInterval = 86_400
        let root = try LabAuthority.root(commonName: "swift-trust Lab Many-Names Root", keyType: keyType, notBefore: now - day, notAfter: now + 3650 * day)
        let names = (0..<count).map { name($0, suffix: suffix) }
        let identity = try root.leaf(
            commonName: "swift-trust lab many names", dnsNames: names, keyType: keyType, notBefore: now - day, notAfter: now + 90 * day)
        return LabManyNamesLeaf(root: root, identity: identity, names: names)
    }
}

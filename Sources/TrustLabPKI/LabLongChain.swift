import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A certification path of any length under its own root: a leaf, then `count` intermediates,
/// each issued by the next, up to a root (not presented) — for tests of depth limits and of
/// the cost of long chains. Keys are P-256 by default, to keep the chain small on the wire.
package struct LabLongChain: Sendable {
    /// The root the top intermediate chains to (an anchor for the test).
    package let root: LabAuthority
    /// The leaf, for ``host``; its `intermediates` are the whole chain above it, nearest first.
    package let leaf: LabIdentity
    /// The name in the leaf's subjectAltName.
    package let host: String

    /// What a server presents: the leaf, then every intermediate, nearest first.
    package var presentedChain: [Certificate] { leaf.chain }

    /// The number of intermediates between the leaf and the root.
    package var intermediateCount: Int { leaf.intermediates.count }

    /// Makes a chain of a leaf for `host` and `intermediates` intermediates (no path-length limits).
    package static func make(
        intermediates count: Int = 99, host: String = "long-chain.lab.test", keyType: LabKeyType = .p256,
        now: Date = Date()
    ) throws -> LabLongChain {
        let day: TimeInterval = 86_400
        let root = try LabAuthority.root(commonName: "swift-trust Lab Long-Chain Root", keyType: keyType, notBefore: now - day, notAfter: now + 3650 * day)
        var issuer = root
        for level in stride(from: count, through: 1, by: -1) {
            issuer = try issuer.intermediate(
                commonName: "swift-trust Lab Long-Chain CA \(level)", keyType: keyType, notBefore: now - day, notAfter: now + 1825 * day)
        }
        let leaf = try issuer.leaf(dnsNames: [host], keyType: keyType, notBefore: now - day, notAfter: now + 90 * day)
        return LabLongChain(root: root, leaf: leaf, host: host)
    }
}

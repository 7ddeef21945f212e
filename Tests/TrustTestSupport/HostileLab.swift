import TrustLabPKI

/// Certificates made to cost: one per process (key generation and 10,000-name signing take a while).
package enum HostileLab {
    package static let longChain: LabLongChain = make { try LabLongChain.make(intermediates: 99) }
    /// 10,000 names in about 90 KB: under BoringSSL's limit, so the client's callback sees it.
    package static let manyNames: LabManyNamesLeaf = make { try LabManyNamesLeaf.make(count: 10_000, suffix: "s") }
    /// 10,000 longer names: past BoringSSL's 100 KB limit on a handshake message.
    package static let manyLongNames: LabManyNamesLeaf = make { try LabManyNamesLeaf.make(count: 10_000, suffix: "many-names.lab.test") }
    package static let cycle: LabCertificateCycle = make { try LabCertificateCycle.make() }

    private static func make<T>(_ body: () throws -> T) -> T {
        do { return try body() } catch { fatalError("cannot make hostile lab certificates: \(error)") }
    }
}

import X509

/// The SPIFFE bundles a workload trusts, by trust domain: an SVID is valid only on a path that ends at an
/// authority of its own trust domain (SPIFFE-ID.md §3: "signed by an authority within the SPIFFE ID's trust
/// domain"). A root trusted for one domain never vouches for an ID of another.
public struct SPIFFETrustBundles: Sendable, Hashable {
    /// The anchors of each trust domain.
    public private(set) var anchorsByTrustDomain: [SPIFFETrustDomain: [Certificate]]

    /// The union of `bundles` (two bundles of one trust domain add up).
    public init(_ bundles: [SPIFFEBundle]) {
        var map: [SPIFFETrustDomain: [Certificate]] = [:]
        for bundle in bundles {
            for anchor in bundle.anchors where !(map[bundle.trustDomain] ?? []).contains(anchor) {
                map[bundle.trustDomain, default: []].append(anchor)
            }
        }
        anchorsByTrustDomain = map
    }

    /// The trust domains, sorted.
    public var trustDomains: [SPIFFETrustDomain] { anchorsByTrustDomain.keys.sorted() }

    /// The anchors of `trustDomain`; empty when it is not trusted.
    public func anchors(for trustDomain: SPIFFETrustDomain) -> [Certificate] { anchorsByTrustDomain[trustDomain] ?? [] }

    /// Every anchor of every trust domain, each once, in trust-domain order.
    public var allAnchors: [Certificate] {
        var all: [Certificate] = []
        for domain in trustDomains {
            for anchor in anchors(for: domain) where !all.contains(anchor) { all.append(anchor) }
        }
        return all
    }

    /// Whether no trust domain has an anchor.
    package var isEmpty: Bool { anchorsByTrustDomain.values.allSatisfy(\.isEmpty) }
}

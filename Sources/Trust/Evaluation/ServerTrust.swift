import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a client knows when it must decide whether to trust a server: the chain the
/// server presented (leaf first, in the order sent), the name it meant to reach, and when.
///
/// This is the platform-neutral counterpart of Apple's `SecTrust` inside an
/// authentication challenge.
public struct ServerTrust: Sendable {
    /// The certificates the peer presented, leaf first. Extra or out-of-order certificates
    /// are only candidates for path building; nothing is trusted because it was presented.
    public var presentedChain: [Certificate]
    /// The expected identity; `nil` when no name is to be checked.
    public var peerName: PeerName?
    /// The time at which validity is judged (exactly; no rounding).
    public var evaluationTime: Date
    /// Certificates found elsewhere than in the peer's chain — missing intermediates fetched from a certificate's
    /// Authority Information Access (``IntermediateFetchingEvaluator``) — that path building may use as the
    /// presented intermediates are used: to link a path, never to end it (they are never anchors). Empty by default.
    public var fetchedIntermediates: [Certificate] = []

    /// Creates a trust from a chain and an already canonical peer name.
    public init(presentedChain: [Certificate], peerName: PeerName?, evaluationTime: Date = Date()) {
        self.presentedChain = presentedChain
        self.peerName = peerName
        self.evaluationTime = evaluationTime
    }

    /// A trust for `host` (DNS name or IP literal), canonicalised.
    public init(presentedChain: [Certificate], host: String, evaluationTime: Date = Date()) throws(PeerNameError) {
        self.init(presentedChain: presentedChain, peerName: try PeerName(host: host), evaluationTime: evaluationTime)
    }

    /// The leaf, if any certificate was presented.
    public var leaf: Certificate? { presentedChain.first }
}

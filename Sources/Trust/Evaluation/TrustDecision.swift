import Foundation
import X509

/// The outcome of a trust evaluation, with everything needed to explain it.
public struct TrustDecision: Sendable {
    /// Whether the server is trusted.
    public var isTrusted: Bool
    /// Why not (empty when trusted). Every reason found is listed.
    public var reasons: [TrustFailureReason]
    /// Things worth knowing even when trusted (validation switched off by configuration, …).
    public var notes: [String]
    /// What the server presented, leaf first.
    public var presentedChain: [Certificate]
    /// The path that validated, leaf → anchor (empty when not trusted).
    public var validatedPath: [Certificate]
    /// When not trusted: the candidate path that came closest (or the presented chain as far
    /// as it links up), to show what was examined.
    public var closestPath: [Certificate]
    /// The name checked, if any.
    public var peerName: PeerName?
    /// When validity was judged.
    public var evaluationTime: Date
    /// The evaluator or policy that decided, in words.
    public var policy: String
    /// The pins the policy expected (empty when it does not pin).
    public var expectedPins: [SPKIPin]
    /// When a trusted decision's time-bounded inputs besides the certificates' own validity hold (the CRLs that
    /// vouched for the path: latest `thisUpdate` to earliest `nextUpdate`); `nil` when nothing but the certificates
    /// bounds it. A cache never reuses the decision outside it.
    public var validity: ClosedRange<Date>?
    /// Failures a lenient mode let through on a trusted path — an unknown revocation status under soft checking,
    /// a Certificate Transparency policy not met under report-only — for failure reports and telemetry (each is
    /// also in ``notes`` in words).
    public var allowedFailures: [TrustFailureReason] = []

    /// Creates a decision from its parts.
    public init(
        isTrusted: Bool, reasons: [TrustFailureReason], notes: [String] = [], presentedChain: [Certificate],
        validatedPath: [Certificate], closestPath: [Certificate] = [], peerName: PeerName?, evaluationTime: Date,
        policy: String, expectedPins: [SPKIPin] = []
    ) {
        self.isTrusted = isTrusted
        self.reasons = reasons
        self.notes = notes
        self.presentedChain = presentedChain
        self.validatedPath = validatedPath
        self.closestPath = closestPath
        self.peerName = peerName
        self.evaluationTime = evaluationTime
        self.policy = policy
        self.expectedPins = expectedPins
        self.validity = nil
    }

    /// A failed decision for a reason found before any path was examined.
    public static func refused(_ reasons: [TrustFailureReason], trust: ServerTrust, policy: String, expectedPins: [SPKIPin] = []) -> TrustDecision {
        TrustDecision(
            isTrusted: false, reasons: reasons, presentedChain: trust.presentedChain, validatedPath: [],
            peerName: trust.peerName, evaluationTime: trust.evaluationTime, policy: policy, expectedPins: expectedPins)
    }

    /// The pins of the path examined (validated, or closest).
    public var pinsSeen: [SPKIPin] { (validatedPath.isEmpty ? closestPath : validatedPath).map(\.spkiPin) }
}

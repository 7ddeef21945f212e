import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The outcome of a trust evaluation, with everything needed to explain it.
///
/// A decision is a value that cannot be changed once made: every member is read-only, set by an
/// initialiser. A decision that something else changes — a challenge handler that accepts or refuses what
/// the evaluator decided, `allowInvalidCertificates` accepting a chain that did not validate — is a new
/// decision made by ``overridden(by:isTrusted:reasons:notes:policy:)``, which keeps the decision it replaces
/// (``override``), so that logs, metrics and observers can tell the two apart.
public struct TrustDecision: Sendable {
    /// Whether the server is trusted.
    public var isTrusted: Bool { storage.isTrusted }
    /// Why not (empty when trusted). Every reason found is listed.
    public var reasons: [TrustFailureReason] { storage.reasons }
    /// Things worth knowing even when trusted (validation switched off by configuration, …).
    public var notes: [String] { storage.notes }
    /// What the server presented, leaf first.
    public var presentedChain: [Certificate] { storage.presentedChain }
    /// The path that validated, leaf → anchor (empty when not trusted).
    public var validatedPath: [Certificate] { storage.validatedPath }
    /// When not trusted: the candidate path that came closest (or the presented chain as far
    /// as it links up), to show what was examined.
    public var closestPath: [Certificate] { storage.closestPath }
    /// The name checked, if any.
    public var peerName: PeerName? { storage.peerName }
    /// When validity was judged.
    public let evaluationTime: Date
    /// The evaluator or policy that decided (its `description` names it in words).
    public var policy: Policy { storage.policy }
    /// The pins the policy expected (empty when it does not pin).
    public var expectedPins: [SPKIPin] { storage.expectedPins }
    /// When a trusted decision's time-bounded inputs besides the certificates' own validity hold (the CRLs that
    /// vouched for the path: latest `thisUpdate` to earliest `nextUpdate`); `nil` when nothing but the certificates
    /// bounds it. A cache never reuses the decision outside it.
    public var validity: ClosedRange<Date>? { storage.validity }
    /// Failures a lenient mode let through on a trusted path — an unknown revocation status under soft checking,
    /// a Certificate Transparency policy not met or a pin set not matched under report-only — for failure reports
    /// and telemetry (each is also in ``notes`` in words).
    public var allowedFailures: [TrustFailureReason] { storage.allowedFailures }
    /// Who replaced the evaluator's decision by this one, and the decision replaced; `nil` for an evaluator's own.
    public var override: Override? { storage.override }

    /// The other parts, in one object shared by every copy. A decision never changes, so its copies can share them:
    /// a decision is one reference (and its time) wherever it goes — into a response, an error, a log record, the
    /// async frames of the requests that wait while holding one — rather than thirteen members to copy and
    /// retain. The time is kept beside it: a cached decision reused for a new connection (``reused(at:)``) is
    /// the same judgement at another time, and shares the rest.
    private let storage: Storage

    private final class Storage: Sendable {
        let isTrusted: Bool
        let reasons: [TrustFailureReason]
        let notes: [String]
        let presentedChain: [Certificate]
        let validatedPath: [Certificate]
        let closestPath: [Certificate]
        let peerName: PeerName?
        let policy: Policy
        let expectedPins: [SPKIPin]
        let validity: ClosedRange<Date>?
        let allowedFailures: [TrustFailureReason]
        let override: Override?

        init(
            isTrusted: Bool, reasons: [TrustFailureReason], notes: [String], presentedChain: [Certificate], validatedPath: [Certificate],
            closestPath: [Certificate], peerName: PeerName?, policy: Policy, expectedPins: [SPKIPin], validity: ClosedRange<Date>?,
            allowedFailures: [TrustFailureReason], override: Override?
        ) {
            self.isTrusted = isTrusted
            self.reasons = reasons
            self.notes = notes
            self.presentedChain = presentedChain
            self.validatedPath = validatedPath
            self.closestPath = closestPath
            self.peerName = peerName
            self.policy = policy
            self.expectedPins = expectedPins
            self.validity = validity
            self.allowedFailures = allowedFailures
            self.override = override
        }
    }

    /// Creates a decision from its parts.
    public init(
        isTrusted: Bool, reasons: [TrustFailureReason], notes: [String] = [], presentedChain: [Certificate],
        validatedPath: [Certificate], closestPath: [Certificate] = [], peerName: PeerName?, evaluationTime: Date,
        policy: Policy, expectedPins: [SPKIPin] = [], validity: ClosedRange<Date>? = nil, allowedFailures: [TrustFailureReason] = []
    ) {
        self.init(
            isTrusted: isTrusted, reasons: reasons, notes: notes, presentedChain: presentedChain, validatedPath: validatedPath,
            closestPath: closestPath, peerName: peerName, evaluationTime: evaluationTime, policy: policy, expectedPins: expectedPins,
            validity: validity, allowedFailures: allowedFailures, override: nil)
    }

    private init(
        isTrusted: Bool, reasons: [TrustFailureReason], notes: [String], presentedChain: [Certificate], validatedPath: [Certificate],
        closestPath: [Certificate], peerName: PeerName?, evaluationTime: Date, policy: Policy, expectedPins: [SPKIPin],
        validity: ClosedRange<Date>?, allowedFailures: [TrustFailureReason], override: Override?
    ) {
        storage = Storage(
            isTrusted: isTrusted, reasons: reasons, notes: notes, presentedChain: presentedChain, validatedPath: validatedPath, closestPath: closestPath,
            peerName: peerName, policy: policy, expectedPins: expectedPins, validity: validity, allowedFailures: allowedFailures, override: override)
        self.evaluationTime = evaluationTime
    }

    private init(storage: Storage, evaluationTime: Date) {
        self.storage = storage
        self.evaluationTime = evaluationTime
    }

    /// A failed decision for a reason found before any path was examined.
    public static func refused(_ reasons: [TrustFailureReason], trust: ServerTrust, policy: Policy, expectedPins: [SPKIPin] = []) -> TrustDecision {
        TrustDecision(
            isTrusted: false, reasons: reasons, presentedChain: trust.presentedChain, validatedPath: [],
            peerName: trust.peerName, evaluationTime: trust.evaluationTime, policy: policy, expectedPins: expectedPins)
    }

    /// The pins of the path examined (validated, or closest).
    public var pinsSeen: [SPKIPin] { (validatedPath.isEmpty ? closestPath : validatedPath).map(\.spkiPin) }

    /// The decision the evaluator reached, before any override (this decision when there was none).
    public var evaluatorDecision: TrustDecision { override?.replaced.evaluatorDecision ?? self }

    /// A new decision by `origin` in place of this one: trusted or not, for `reasons`, with `notes`, under `policy`
    /// (this one's by default). Everything else (the paths examined, the pins, the name, the time) is this decision's;
    /// this decision itself — its reasons, when it refused — is kept in the new one's ``override``. A refusal has no
    /// validated path: when it replaces a trusted decision, the path that validated is its closest path instead
    /// (the replaced decision keeps it as its validated path).
    public func overridden(
        by origin: Override.Origin, isTrusted: Bool, reasons: [TrustFailureReason] = [], notes: [String], policy: Policy? = nil
    ) -> TrustDecision {
        TrustDecision(
            isTrusted: isTrusted, reasons: reasons, notes: notes, presentedChain: presentedChain, validatedPath: isTrusted ? validatedPath : [],
            closestPath: isTrusted || !closestPath.isEmpty ? closestPath : validatedPath, peerName: peerName, evaluationTime: evaluationTime,
            policy: policy ?? self.policy, expectedPins: expectedPins, validity: validity, allowedFailures: allowedFailures,
            override: Override(origin: origin, replaced: self))
    }

    /// This decision — another evaluator's, reached on its own — in place of `replaced`, by `origin`: everything is
    /// this decision's, and `replaced` is kept in its ``override`` (a DEBUG build's debug override anchors accepting
    /// a chain the configured policy refused).
    func overriding(_ replaced: TrustDecision, by origin: Override.Origin) -> TrustDecision {
        TrustDecision(
            isTrusted: isTrusted, reasons: reasons, notes: notes, presentedChain: presentedChain, validatedPath: validatedPath,
            closestPath: closestPath, peerName: peerName, evaluationTime: evaluationTime, policy: policy, expectedPins: expectedPins,
            validity: validity, allowedFailures: allowedFailures, override: Override(origin: origin, replaced: replaced))
    }

    /// This decision with `failures` a lenient mode let through added to its ``allowedFailures`` (a report-only
    /// pin set that did not match).
    func allowing(_ failures: [TrustFailureReason]) -> TrustDecision {
        guard !failures.isEmpty else { return self }
        return replacing(allowedFailures: allowedFailures + failures)
    }

    /// This decision with `notes` added after its own (what the evaluator that made it observed besides: a
    /// configuration entry's warnings, a revocation budget that ran out).
    package func adding(notes more: [String]) -> TrustDecision {
        guard !more.isEmpty else { return self }
        return replacing(notes: notes + more)
    }

    /// This decision with its reasons, allowed failures and notes replaced (the same judgement, worded with more
    /// detail: a fetch budget named in an unknown revocation status).
    package func rewording(reasons: [TrustFailureReason], allowedFailures: [TrustFailureReason], notes: [String]) -> TrustDecision {
        replacing(reasons: reasons, notes: notes, allowedFailures: allowedFailures)
    }

    /// This decision with what the rules observed on its validated path: their notes and failures let through,
    /// and its validity narrowed to `validity`.
    func observing(notes more: [String], allowedFailures failures: [TrustFailureReason], validity window: ClosedRange<Date>?) -> TrustDecision {
        replacing(notes: notes + more, allowedFailures: allowedFailures + failures, validity: .some(window))
    }

    /// This (cached) decision as reached at `time`: the same judgement, the time of the evaluation it answers.
    package func reused(at time: Date) -> TrustDecision {
        TrustDecision(storage: storage, evaluationTime: time)
    }

    private func replacing(
        reasons: [TrustFailureReason]? = nil, notes: [String]? = nil, allowedFailures: [TrustFailureReason]? = nil,
        validity: ClosedRange<Date>?? = nil
    ) -> TrustDecision {
        TrustDecision(
            isTrusted: isTrusted, reasons: reasons ?? self.reasons, notes: notes ?? self.notes, presentedChain: presentedChain,
            validatedPath: validatedPath, closestPath: closestPath, peerName: peerName, evaluationTime: evaluationTime,
            policy: policy, expectedPins: expectedPins, validity: validity ?? self.validity, allowedFailures: allowedFailures ?? self.allowedFailures,
            override: override)
    }
}

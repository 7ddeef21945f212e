import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A candidate certification path: leaf first, anchor last.
public struct CertificatePath: Sendable, Hashable {
    /// The certificates, leaf first.
    public let certificates: [Certificate]
    /// `true` when the last certificate is a trusted anchor; `false` for a partial path
    /// examined only to explain why no anchored path exists.
    public var endsAtAnchor: Bool
    /// The facts of each certificate, in the same order (from the process's cache, so each is worked out once).
    public let facts: [CertificateFacts]

    /// Creates a path from `certificates`, leaf first.
    package init(_ certificates: [Certificate], endsAtAnchor: Bool = true) {
        self.certificates = certificates
        self.endsAtAnchor = endsAtAnchor
        self.facts = CertificateFactsCache.shared.facts(of: certificates)
    }

    /// A path whose facts are already known (one per certificate, in order).
    init(_ certificates: [Certificate], facts: [CertificateFacts], endsAtAnchor: Bool) {
        self.certificates = certificates
        self.endsAtAnchor = endsAtAnchor
        self.facts = facts.count == certificates.count ? facts : CertificateFactsCache.shared.facts(of: certificates)
    }

    /// Paths are equal when their certificates and `endsAtAnchor` are (facts follow from the certificates).
    public static func == (lhs: CertificatePath, rhs: CertificatePath) -> Bool {
        lhs.endsAtAnchor == rhs.endsAtAnchor && lhs.certificates == rhs.certificates
    }

    /// Hashes the certificates and `endsAtAnchor`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(certificates)
        hasher.combine(endsAtAnchor)
    }

    /// The first certificate: the one being validated.
    public var leaf: Certificate { certificates[0] }
    /// The number of certificates.
    public var count: Int { certificates.count }

    /// Indices of certificates that issued the one before them (all but the leaf).
    package var issuerIndices: Range<Int> { 1..<certificates.count }

    /// Whether `index` is the trust anchor of an anchored path.
    public func isAnchor(_ index: Int) -> Bool { endsAtAnchor && index == certificates.count - 1 }
}

/// What a rule may know about the evaluation besides the path.
public struct RuleContext: Sendable {
    /// The time at which validity is judged.
    public var evaluationTime: Date
    /// The expected identity; `nil` when no name is to be checked.
    public var peerName: PeerName?

    /// Creates a context.
    package init(evaluationTime: Date, peerName: PeerName?) {
        self.evaluationTime = evaluationTime
        self.peerName = peerName
    }
}

/// One rule that judges a candidate path, such as expiry, basic constraints, or pins.
///
/// Rules run inside the path search (swift-certificates' `Verifier`), so a path that
/// fails a rule makes the search try the next candidate — an alternative valid path is
/// still found, and a pin can only ever be satisfied by a certificate on a path that
/// validates. A rule returns *every* reason it finds, so a failure can name them all.
public protocol PathRule: Sendable {
    /// Critical extensions this rule fully enforces; a certificate with any other critical
    /// extension is rejected before rules run.
    var handledCriticalExtensions: [ASN1ObjectIdentifier] { get }

    /// The reasons `path` fails this rule; empty when it passes.
    func check(_ path: CertificatePath, context: RuleContext) -> [TrustFailureReason]

    /// Whether ``observe(_:context:)`` may say anything (the validator asks only the rules that may).
    var observesTrustedPaths: Bool { get }

    /// What the decision on a trusted `path` should carry without refusing it — notes (a revocation status
    /// that could not be established under soft checking, say) and the times outside which the rule's inputs
    /// no longer vouch for the path (the CRLs' `thisUpdate`…`nextUpdate`); asked once, on the validated path.
    func observe(_ path: CertificatePath, context: RuleContext) -> PathObservation
}

/// What a rule says about a trusted path without refusing it.
public struct PathObservation: Sendable, Hashable {
    /// Notes for the decision.
    public var notes: [String]
    /// When the rule's verdict holds; `nil`: whenever the certificates are valid.
    public var validity: ClosedRange<Date>?
    /// Failures the rule let through because of a lenient mode (soft, report-only), for reports.
    public var allowedFailures: [TrustFailureReason] = []

    /// An observation.
    public init(notes: [String] = [], validity: ClosedRange<Date>? = nil) {
        self.notes = notes
        self.validity = validity
    }

    /// Narrows ``validity`` to `window` (their intersection; it starts as `window`).
    package mutating func narrowValidity(to window: ClosedRange<Date>) {
        validity = Self.narrowed(validity, to: window)
    }

    /// The intersection of `current` (none: unbounded) and `window`; windows that do not meet leave an empty
    /// instant at the later start, so nothing is reused outside either.
    static func narrowed(_ current: ClosedRange<Date>?, to window: ClosedRange<Date>) -> ClosedRange<Date> {
        guard let current else { return window }
        let lower = max(current.lowerBound, window.lowerBound)
        let upper = min(current.upperBound, window.upperBound)
        return lower <= upper ? lower...upper : lower...lower
    }
}

extension PathRule {
    /// By default a rule handles no critical extension.
    public var handledCriticalExtensions: [ASN1ObjectIdentifier] { [] }
    /// By default a rule observes nothing.
    public var observesTrustedPaths: Bool { false }
    /// By default, nothing.
    public func observe(_ path: CertificatePath, context: RuleContext) -> PathObservation { PathObservation() }
}

extension Certificate {
    /// A short name for messages: the subject, or the serial number when the subject is empty.
    var displayName: String {
        let subject = self.subject.description
        return subject.isEmpty ? "certificate with serial \(serialNumber)" : subject
    }
}

extension Certificate {
    /// Whether basicConstraints says cA = TRUE.
    var isCertificateAuthority: Bool {
        if case .isCertificateAuthority? = try? extensions.basicConstraints { return true }
        return false
    }
}

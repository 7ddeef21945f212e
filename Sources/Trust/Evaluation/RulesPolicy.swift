import SwiftASN1
import X509

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Adapts a list of ``PathRule``s to swift-certificates' `VerifierPolicy`, and records every
/// candidate that failed with its structured reasons (the Verifier itself only keeps strings).
struct RulesPolicy: VerifierPolicy {
    let rules: [any PathRule]
    let context: RuleContext
    let budget: WorkBudget
    let budgetLimit: Int
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier]
    /// Failed candidates in the order tried (a reference: the Verifier's policy type is opaque).
    let log = CandidateLog()

    init(rules: [any PathRule], context: RuleContext, budget: WorkBudget, budgetLimit: Int) {
        self.rules = rules
        self.context = context
        self.budget = budget
        self.budgetLimit = budgetLimit
        self.verifyingCriticalExtensions = Self.handledCriticalExtensions(of: rules)
    }

    /// Every critical extension some rule enforces, each once.
    static func handledCriticalExtensions(of rules: [any PathRule]) -> [ASN1ObjectIdentifier] {
        var handled: [ASN1ObjectIdentifier] = []
        for rule in rules {
            for oid in rule.handledCriticalExtensions where !handled.contains(oid) {
                handled.append(oid)
            }
        }
        return handled
    }

    func evaluate(_ path: CertificatePath) -> [TrustFailureReason] {
        rules.flatMap { $0.check(path, context: context) }
    }

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        guard budget.chargeCandidates(1, limit: budgetLimit) else {
            return .failsToMeetPolicy(reason: "work budget exhausted")
        }
        let path = CertificatePath(Array(chain), endsAtAnchor: true)
        let reasons = evaluate(path)
        if reasons.isEmpty { return .meetsPolicy }
        log.append(path, reasons)
        return .failsToMeetPolicy(reason: reasons.map(\.description).joined(separator: "; "))
    }
}

/// The candidates a ``RulesPolicy`` refused, with their reasons.
final class CandidateLog: @unchecked Sendable {
    private let lock = Lock()
    private var entries: [(path: CertificatePath, reasons: [TrustFailureReason])] = []

    func append(_ path: CertificatePath, _ reasons: [TrustFailureReason]) {
        lock.lock()
        entries.append((path, reasons))
        lock.unlock()
    }

    var failures: [(path: CertificatePath, reasons: [TrustFailureReason])] {
        lock.lock()
        defer { lock.unlock() }
        return entries
    }
}

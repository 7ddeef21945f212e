#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A bound on the work one evaluation may do, so hostile chains (hundreds of
/// same-named intermediates, cycles, quadratic name-constraint sets) are refused fast
/// instead of burning seconds of CPU.
final class WorkBudget: @unchecked Sendable {
    private let lock = Lock()
    private var signatureChecksLeft: Int
    private var exhausted: String?

    init(maximumSignatureChecks: Int) {
        self.signatureChecksLeft = maximumSignatureChecks
    }

    /// Charges `count` candidate issuers (each costs a signature verification); `false` once spent.
    func chargeCandidates(_ count: Int, limit: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if exhausted != nil { return false }
        signatureChecksLeft -= count
        if signatureChecksLeft < 0 {
            exhausted = "path building needed more than \(limit) signature checks"
            return false
        }
        return true
    }

    /// Why the budget ran out, if it did.
    var exhaustedReason: String? {
        lock.lock()
        defer { lock.unlock() }
        return exhausted
    }

    var isExhausted: Bool { exhaustedReason != nil }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Counts how many times this process has built one kind of expensive object (a path validator, an
/// anchor index; TrustHTTP adds TLS contexts), so that a test can prove a hot path builds none. One locked
/// increment per construction; such constructions are rare by design.
package final class ConstructionCounter: @unchecked Sendable {
    private let lock = Lock()
    private var count = 0

    package init() {}

    /// The number of constructions so far.
    package var value: Int { lock.withLock { count } }

    package func increment() { lock.withLock { count += 1 } }

    /// Path validators (every evaluator holds one).
    package static let pathValidators = ConstructionCounter()
    /// Anchor indexes (one per validator and anchor set).
    package static let anchorIndexes = ConstructionCounter()
}

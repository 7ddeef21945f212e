import NIOConcurrencyHelpers

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a lab server received on `POST /reports` (a pin-failure report collector).
public final class LabReportInbox: Sendable {
    private let received = NIOLockedValueBox<[Data]>([])
    static let capacity = 1000

    /// An empty inbox.
    package init() {}

    func append(_ body: Data) {
        received.withLockedValue { if $0.count < Self.capacity { $0.append(body) } }
    }

    /// The report bodies received, in order.
    public var reports: [Data] { received.withLockedValue { $0 } }
}

import NIOConcurrencyHelpers
import Trust

/// What happened during one connection's server-trust evaluation, kept for the caller.
///
/// NIOSSL reports a refused certificate only as `CERTIFICATE_VERIFY_FAILED` (and an error passed
/// to the verification promise is not surfaced), so the verifier writes the full
/// `TrustDecision` here, where the code that opened the connection can read it back.
public final class TrustRecord: Sendable {
    private let state = NIOLockedValueBox<(decision: TrustDecision?, evaluations: Int)>((nil, 0))

    /// An empty record; the verifier fills it in.
    public init() {}

    /// The decision of the most recent evaluation on this connection.
    public var decision: TrustDecision? { state.withLockedValue { $0.decision } }

    /// How many times the server's chain was evaluated on this connection (one per handshake).
    public var evaluations: Int { state.withLockedValue { $0.evaluations } }

    func record(_ decision: TrustDecision) {
        state.withLockedValue {
            $0.decision = decision
            $0.evaluations += 1
        }
    }
}

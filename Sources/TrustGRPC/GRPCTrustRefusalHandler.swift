#if GRPC
    import NIOCore
    import TrustNIO

    /// Placed right after a gRPC connection's NIOSSL handler: NIOSSL reports a refused certificate only as
    /// `CERTIFICATE_VERIFY_FAILED`, so an error that follows a refusal recorded in the connection's ``TrustRecord``
    /// goes on as a ``GRPCTrustRefusal`` carrying the decision — the error the transport then gives as the cause of
    /// the connection's failure.
    final class GRPCTrustRefusalHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny

        private let record: TrustRecord
        private let host: String

        init(record: TrustRecord, host: String) {
            self.record = record
            self.host = host
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if let decision = record.decision, !decision.isTrusted {
                context.fireErrorCaught(GRPCTrustRefusal(decision: decision, host: host))
            } else {
                context.fireErrorCaught(error)
            }
        }
    }
#endif

import NIOConcurrencyHelpers
import NIOCore

/// Remembers the TLS-level errors a connection saw (a TLS 1.3 server's "certificate required" or
/// "unknown CA" alert arrives after the handshake, often after a pending write has already failed
/// with "I/O on closed channel": errors are classified by looking at both).
final class TLSErrorLog: Sendable {
    private let errors = NIOLockedValueBox<[String]>([])

    func append(_ error: any Error) {
        errors.withLockedValue { if $0.count < 8 { $0.append("\(error)") } }
    }

    var text: String { errors.withLockedValue { $0.joined(separator: " ") } }
}

/// Sits right after the TLS handler and logs every error that passes.
final class TLSErrorRecorder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let log: TLSErrorLog

    init(log: TLSErrorLog) {
        self.log = log
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        log.append(error)
        context.fireErrorCaught(error)
    }
}

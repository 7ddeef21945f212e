import NIOConcurrencyHelpers
import NIOCore

/// Remembers the errors a connection saw below its streams: TLS-level errors (a TLS 1.3 server's "certificate required" or
/// "unknown CA" alert arrives after the handshake, often after a pending write has already failed
/// with "I/O on closed channel": errors are classified by looking at both).
///
/// Also keeps the first ``ServerViolation`` seen on the connection: an HTTP/2 connection error
/// (a flood, a broken rule) is raised on the connection, while its streams only hear that they
/// were closed.
final class ConnectionErrorLog: Sendable {
    private let errors = NIOLockedValueBox<(texts: [String], violation: ServerViolation?, waiters: [@Sendable () -> Void])>(([], nil, []))

    func append(_ error: any Error) {
        let violation = ServerViolation(error)
        let waiters = errors.withLockedValue { state -> [@Sendable () -> Void] in
            if state.texts.count < 8 { state.texts.append("\(error)") }
            guard state.violation == nil, let violation else { return [] }
            state.violation = violation
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter() }
    }

    /// Calls `callback` once a violation is recorded (at once if one is).
    func whenViolation(_ callback: @escaping @Sendable () -> Void) {
        let now = errors.withLockedValue { state -> Bool in
            if state.violation != nil { return true }
            state.waiters.append(callback)
            return false
        }
        if now { callback() }
    }

    var text: String { errors.withLockedValue { $0.texts.joined(separator: " ") } }

    /// The first violation of the connection's protocol seen, if any.
    var violation: ServerViolation? { errors.withLockedValue { $0.violation } }
}

/// Sits right after the TLS handler (and after the HTTP/2 connection handler) and logs every error that passes.
/// After the HTTP/2 connection handler it also closes the connection on a violation: swift-nio-http2
/// answers a connection error (a flood, a broken rule) with GOAWAY but leaves the channel open,
/// and a peer that goes on flooding must not keep it.
final class ConnectionErrorRecorder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let log: ConnectionErrorLog
    let closesOnViolation: Bool

    init(log: ConnectionErrorLog, closesOnViolation: Bool = false) {
        self.log = log
        self.closesOnViolation = closesOnViolation
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        log.append(error)
        if closesOnViolation && log.violation != nil {
            context.close(promise: nil)
            return
        }
        context.fireErrorCaught(error)
    }
}

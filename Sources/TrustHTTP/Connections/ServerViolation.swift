import Foundation
import NIOHTTP1
import NIOHTTP2

/// What a server did wrong, read from an error raised inside a connection's pipeline: a response
/// over a ``ResponseLimits`` bound, an HTTP/1.1 message NIO's parser refused (a bare CR or a NUL in a
/// header, an invalid header token — RFC 9112 §2.2, §5), or an HTTP/2 rule broken (a flood of control
/// frames, resets or CONTINUATION frames, a header block too large, a flow-control violation —
/// the protections listed in ``HandshakeWaiter/http2Configuration(_:)``). Errors that only say a
/// stream or connection ended (`StreamClosed`, a closed channel) are not violations: they may be
/// retried.
struct ServerViolation: Sendable, Equatable {
    /// `responseTooLarge` or `badServerResponse`.
    var code: SessionError.Code = .badServerResponse
    /// The limit exceeded, when it is known.
    var limit: ResponseLimit?
    /// The protocol rule broken, when it is not a limit.
    var rule: SessionError.ProtocolViolation?
    /// What happened, in words.
    var message: String
    /// The error as NIO described it.
    var underlying: String

    init?(_ error: any Error) {
        underlying = "\(error)"
        if let exceeded = error as? ResponseLimitExceeded {
            code = .responseTooLarge
            limit = exceeded.limit
            message = exceeded.limit.description
            return
        }
        if let parser = error as? HTTPParserError {
            // The connection ending mid-message is a lost connection, not a malformed one.
            if parser == .invalidEOFState || parser == .closedConnection { return nil }
            if parser == .headerOverflow {
                code = .responseTooLarge
                message = "response header or trailer section over the limits (ResponseLimits)"
            } else {
                rule = .malformedHTTP1Response
                message = "malformed HTTP/1.1 response (\(parser))"
            }
            return
        }
        if error is HTTP2StatusGuard.InvalidStatus {
            rule = .http2
            message = "broke an HTTP/2 rule (a response :status that is not three digits)"
            return
        }
        // A field value with a control character: malformed (RFC 9113 §8.2.1, RFC 9110 §5.5), as the same
        // head over HTTP/1.1 is. Ours names the field; swift-nio-http2's (CR, LF, NUL) quotes the value in
        // `underlying`, which descriptions escape (DisplayText).
        if let invalid = error as? HTTP2FieldValueGuard.InvalidFieldValue {
            rule = .malformedHTTP2Response
            message = "malformed HTTP/2 response (\(invalid))"
            return
        }
        if error is NIOHTTP2Errors.InvalidHTTP2HeaderFieldValue {
            rule = .malformedHTTP2Response
            message = "malformed HTTP/2 response (a field value with CR, LF or NUL)"
            return
        }
        if let flood = error as? HTTP2FloodGuard.Flood {
            rule = .http2
            message = "broke an HTTP/2 rule (\(flood))"
            return
        }
        guard let http2 = error as? any NIOHTTP2Error else { return nil }
        switch http2 {
        case is NIOHTTP2Errors.StreamClosed, is NIOHTTP2Errors.IOOnClosedConnection,
            is NIOHTTP2Errors.CreatedStreamAfterGoaway, is NIOHTTP2Errors.NoStreamIDAvailable, is NIOHTTP2Errors.ActivationError:
            return nil
        case is NIOHTTP2Errors.ExcessivelyLargeHeaderBlock, is NIOHTTP2Errors.ExcessiveContinuationFrames:
            code = .responseTooLarge
            message = "HTTP/2 response header block over the limit (\(String(describing: type(of: http2))))"
        default:
            rule = .http2
            message = "broke an HTTP/2 rule (\(String(describing: type(of: http2))))"
        }
    }

    /// The ``SessionError`` for this violation by `origin`.
    func sessionError(origin: Origin, url: URL?) -> SessionError {
        if let limit { return SessionError(limit, url: url) }
        var error = SessionError(code, "\(origin): " + message, url: url, underlying: underlying)
        error.protocolViolation = rule
        return error
    }
}

import NIOHTTP1
import NIOHTTP2

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a server did wrong, read from an error raised inside a connection's pipeline: a response
/// over a ``ResponseLimits`` bound, an HTTP/1.1 message NIO's parser refused (a bare CR or a NUL in a
/// header, an invalid header token — RFC 9112 §2.2, §5), or an HTTP/2 rule broken (a flood of control
/// frames, resets or CONTINUATION frames, a header block too large, a flow-control violation —
/// the protections listed in ``HandshakeWaiter/http2Configuration(_:)``). Errors that only say a
/// stream or connection ended (`StreamClosed`, a closed channel) are not violations: they may be
/// retried.
struct ServerViolation: Sendable, Equatable {
    /// `responseTooLarge` or `badServerResponse`.
    var code: TrustHTTPClientError.Code = .badServerResponse
    /// The limit exceeded, when it is known.
    var limit: ResponseLimit?
    /// The protocol rule broken, when it is not a limit.
    var rule: TrustHTTPClientError.ProtocolViolation?
    /// What happened, in words.
    var message: String
    /// The error as NIO described it.
    var underlying: String

    /// The violation `error` reports; `nil` when it is not one (the connection only ended, or the
    /// error did not come from the server's bytes).
    init?(_ error: any Error) {
        guard let finding = Self.finding(error) else { return nil }
        code = finding.code
        limit = (error as? ResponseLimitExceeded)?.limit
        rule = finding.rule
        message = finding.message
        underlying = "\(error)"
    }

    /// A violation's code, rule and wording.
    private typealias Finding = (code: TrustHTTPClientError.Code, rule: TrustHTTPClientError.ProtocolViolation?, message: String)

    /// What `error` says the server did wrong, if anything.
    private static func finding(_ error: any Error) -> Finding? {
        switch error {
        case let exceeded as ResponseLimitExceeded:
            return (.responseTooLarge, nil, exceeded.limit.description)
        case let parser as HTTPParserError:
            return http1Finding(parser)
        case is HTTP2ExchangeFraming.InvalidStatus:
            return (
                .badServerResponse, .http2,
                "broke an HTTP/2 rule (a response :status that is not three digits, a 101, or an interim response ending the stream)"
            )
        case is HTTP2ExchangeFraming.FrameOutOfOrder:
            return (.badServerResponse, .http2, "broke an HTTP/2 rule (response frames out of order)")
        // A field value with a control character: malformed (RFC 9113 §8.2.1, RFC 9110 §5.5), as the same
        // head over HTTP/1.1 is. Ours names the field; swift-nio-http2's (CR, LF, NUL) quotes the value in
        // `underlying`, which descriptions escape (DisplayText).
        case let invalid as HTTP2ExchangeFraming.InvalidFieldValue:
            return (.badServerResponse, .malformedHTTP2Response, "malformed HTTP/2 response (\(invalid))")
        case is NIOHTTP2Errors.InvalidHTTP2HeaderFieldValue:
            return (.badServerResponse, .malformedHTTP2Response, "malformed HTTP/2 response (a field value with CR, LF or NUL)")
        case let flood as HTTP2FloodGuard.Flood:
            return (.badServerResponse, .http2, "broke an HTTP/2 rule (\(flood))")
        case let http2 as any NIOHTTP2Error:
            return http2Finding(http2)
        default:
            return nil
        }
    }

    /// An HTTP/1.1 message NIO's parser refused (RFC 9112 §2.2, §5).
    private static func http1Finding(_ parser: HTTPParserError) -> Finding? {
        // The connection ending mid-message is a lost connection, not a malformed one.
        if parser == .invalidEOFState || parser == .closedConnection { return nil }
        if parser == .headerOverflow {
            return (.responseTooLarge, nil, "response header or trailer section over the limits (ResponseLimits)")
        }
        return (.badServerResponse, .malformedHTTP1Response, "malformed HTTP/1.1 response (\(parser))")
    }

    /// An HTTP/2 error of swift-nio-http2: a rule broken, a header block too large, or only a stream or
    /// connection that ended.
    private static func http2Finding(_ http2: any NIOHTTP2Error) -> Finding? {
        switch http2 {
        case is NIOHTTP2Errors.StreamClosed, is NIOHTTP2Errors.IOOnClosedConnection,
            is NIOHTTP2Errors.CreatedStreamAfterGoaway, is NIOHTTP2Errors.NoStreamIDAvailable, is NIOHTTP2Errors.ActivationError:
            return nil
        case is NIOHTTP2Errors.ExcessivelyLargeHeaderBlock, is NIOHTTP2Errors.ExcessiveContinuationFrames:
            return (.responseTooLarge, nil, "HTTP/2 response header block over the limit (\(String(describing: type(of: http2))))")
        default:
            return (.badServerResponse, .http2, "broke an HTTP/2 rule (\(String(describing: type(of: http2))))")
        }
    }

    /// The ``TrustHTTPClientError`` for this violation by `origin`.
    func sessionError(origin: Origin, url: URL?) -> TrustHTTPClientError {
        if let limit { return TrustHTTPClientError(limit, url: url) }
        var error = TrustHTTPClientError(code, "\(origin): " + message, url: url, underlying: underlying)
        error.protocolViolation = rule
        return error
    }
}

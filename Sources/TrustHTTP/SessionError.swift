import Foundation
import NIOHTTPCompression
import Trust

/// The one error a ``Session`` throws: a URLError-style code users already know, a message
/// that says what happened, and — for server trust — the full `TrustDecision`.
public struct SessionError: Error, Sendable, CustomStringConvertible, LocalizedError, CustomReflectable {
    /// Foundation's `URLError` codes, with the same numbers.
    public enum Code: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The request, or one of its challenges, was cancelled.
        case cancelled = -999
        /// The URL, the method or the host name is not valid.
        case badURL = -1000
        /// The request, or a challenge handler, did not finish in time.
        case timedOut = -1001
        /// The URL's scheme is neither `http` nor `https`.
        case unsupportedURL = -1002
        /// The host name could not be resolved.
        case cannotFindHost = -1003
        /// No connection to the host could be made.
        case cannotConnectToHost = -1004
        /// The connection failed or was lost during the request.
        case networkConnectionLost = -1005
        /// More redirects than the configuration's `maximumRedirects`.
        case httpTooManyRedirects = -1007
        /// The server or proxy answered with something unusable (a wrong `rspauth`, a refused CONNECT, a broken HTTP/2 rule).
        case badServerResponse = -1011
        /// The response exceeded a ``ResponseLimits`` bound (body, head, header fields, 1xx responses);
        /// ``SessionError/limit`` says which. Foundation's `dataLengthExceedsMaximum`.
        case responseTooLarge = -1103
        /// A compressed body (``ResponseDecompression``) is not valid gzip or deflate. Foundation's `cannotDecodeContentData`.
        case cannotDecodeContentData = -1016
        /// An HTTP authentication challenge was cancelled.
        case userCancelledAuthentication = -1012
        /// An HTTP authentication challenge could not be answered.
        case userAuthenticationRequired = -1013
        /// TLS could not be set up, the handshake failed, or the negotiated TLS version is refused.
        case secureConnectionFailed = -1200
        /// A certificate on the server's path had expired.
        case serverCertificateHasBadDate = -1201
        /// The server is not trusted.
        case serverCertificateUntrusted = -1202
        /// The server's chain leads to no trusted anchor.
        case serverCertificateHasUnknownRoot = -1203
        /// A certificate on the server's path is not yet valid.
        case serverCertificateNotYetValid = -1204
        /// The server refused the client certificate, or the handler's answer was not an identity.
        case clientCertificateRejected = -1205
        /// The server requires a client certificate and none was sent.
        case clientCertificateRequired = -1206
        /// A streamed request body (``RequestBody``) failed: its sequence threw, or it yielded fewer or
        /// more bytes than its declared length. Foundation's `requestBodyStreamExhausted`.
        case requestBodyStreamExhausted = -1021
        /// The upload file (``RequestBody/file(_:chunkSize:)``) does not exist or cannot be opened.
        case fileDoesNotExist = -1100
        /// The upload file is a directory or another file that is not a regular file.
        case fileIsDirectory = -1101
        /// The upload file cannot be read.
        case noPermissionsToReadFile = -1102
        /// A download's file could not be created (``Session/download(for:to:progress:)``).
        case cannotCreateFile = -3000
        /// A download's file could not be written, closed or moved into place.
        case cannotWriteToFile = -3003

        /// The code's name (`serverCertificateUntrusted`).
        public var description: String {
            switch self {
            case .cancelled: return "cancelled"
            case .badURL: return "badURL"
            case .timedOut: return "timedOut"
            case .unsupportedURL: return "unsupportedURL"
            case .cannotFindHost: return "cannotFindHost"
            case .cannotConnectToHost: return "cannotConnectToHost"
            case .networkConnectionLost: return "networkConnectionLost"
            case .httpTooManyRedirects: return "httpTooManyRedirects"
            case .badServerResponse: return "badServerResponse"
            case .responseTooLarge: return "responseTooLarge"
            case .cannotDecodeContentData: return "cannotDecodeContentData"
            case .userCancelledAuthentication: return "userCancelledAuthentication"
            case .userAuthenticationRequired: return "userAuthenticationRequired"
            case .secureConnectionFailed: return "secureConnectionFailed"
            case .serverCertificateHasBadDate: return "serverCertificateHasBadDate"
            case .serverCertificateUntrusted: return "serverCertificateUntrusted"
            case .serverCertificateHasUnknownRoot: return "serverCertificateHasUnknownRoot"
            case .serverCertificateNotYetValid: return "serverCertificateNotYetValid"
            case .clientCertificateRejected: return "clientCertificateRejected"
            case .clientCertificateRequired: return "clientCertificateRequired"
            case .cannotCreateFile: return "cannotCreateFile"
            case .cannotWriteToFile: return "cannotWriteToFile"
            case .requestBodyStreamExhausted: return "requestBodyStreamExhausted"
            case .fileDoesNotExist: return "fileDoesNotExist"
            case .fileIsDirectory: return "fileIsDirectory"
            case .noPermissionsToReadFile: return "noPermissionsToReadFile"
            }
        }
    }

    /// What kind of failure, as a `URLError` code.
    public var code: Code
    /// What happened, in words.
    public var message: String
    /// The URL of the request that failed.
    public var url: URL?
    /// For server-trust failures: the evaluation, with reasons, presented and validated chains, pins.
    public var trustDecision: TrustDecision?
    /// The lower-level error, described (NIO, NIOSSL, the OS).
    public var underlying: String?
    /// The lower-level error itself (NIO, NIOSSL, the OS), for code that inspects it; ``underlying``
    /// is its description.
    public var underlyingError: (any Error)?
    /// For ``Code/responseTooLarge``: the limit the response exceeded.
    public var limit: ResponseLimit?
    /// For ``Code/badServerResponse`` raised by the protocol itself: which rule the server broke.
    public var protocolViolation: ProtocolViolation?
    /// For ``Code/networkConnectionLost`` while reading a body: the server closed the connection in
    /// an orderly way before the body's end (fewer bytes than its `Content-Length`, a chunked body
    /// without its last chunk; RFC 9112 §8) — curl's "partial file" — rather than the connection
    /// failing (a reset, a TLS connection cut without close_notify).
    public var isIncompleteBody = false
    /// For a failed TLS handshake (``Code/secureConnectionFailed``, ``Code/clientCertificateRequired``): why,
    /// as far as the TLS library says; ``explanation`` words it.
    public var handshakeFailure: HandshakeFailure?

    /// A rule of the HTTP protocol a server broke.
    public enum ProtocolViolation: String, Sendable, Hashable {
        /// An HTTP/1.1 response head NIO's parser refused: a bare CR or LF, a NUL, an invalid token
        /// (RFC 9112 §2.2, §5; RFC 9110 §5.5).
        case malformedHTTP1Response = "malformed-http1-response"
        /// An HTTP/2 response with a field value RFC 9110 §5.5 does not allow: a control character
        /// (ESC, BEL, BS…; RFC 9113 §8.2.1, §8.1.1) — refused as an HTTP/1.1 head with one is.
        case malformedHTTP2Response = "malformed-http2-response"
        /// An HTTP/2 rule: a frame flood, a flow-control violation, GOAWAY abuse, an invalid
        /// `:status` (RFC 9113).
        case http2 = "http2"
    }

    /// An error with its code, message and optional details.
    public init(_ code: Code, _ message: String, url: URL? = nil, trustDecision: TrustDecision? = nil, underlying: String? = nil, limit: ResponseLimit? = nil) {
        self.code = code
        self.message = message
        self.url = url
        self.trustDecision = trustDecision
        self.underlying = underlying
        self.limit = limit
    }

    /// An error caused by a lower-level `underlyingError`, kept as it is and described in ``underlying``.
    public init(_ code: Code, _ message: String, url: URL? = nil, underlyingError: any Error) {
        self.init(code, message, url: url, underlying: "\(underlyingError)")
        self.underlyingError = underlyingError
    }

    /// The error for a response that exceeded `limit`.
    /// The error for a failure of ``ResponseDecompression`` (swift-nio-extras' decompressor), or `nil`
    /// when `error` is not one.
    init?(decompressionFailure error: any Error, decompression: ResponseDecompression, url: URL?) {
        if let failure = error as? NIOHTTPDecompression.DecompressionError {
            switch failure {
            case .limit:
                self.init(ResponseLimit(.decompressionRatio, observed: decompression.maximumRatio + 1, limit: decompression.maximumRatio), url: url)
            case .inflationError, .initializationError:
                self.init(.cannotDecodeContentData, "the response body is not valid gzip or deflate data", url: url, underlyingError: failure)
            }
        } else if let failure = error as? NIOHTTPDecompression.ExtraDecompressionError {
            self.init(.cannotDecodeContentData, "the response body is not valid gzip or deflate data (\(failure))", url: url)
        } else {
            return nil
        }
    }

    init(_ limit: ResponseLimit, url: URL?) {
        self.init(.responseTooLarge, limit.description, url: url, limit: limit)
    }

    /// The URLError code number (e.g. -1202).
    public var errorCode: Int { code.rawValue }

    /// Code, number, message, URL (password hidden), trust reasons, underlying error and the likely fix
    /// (``explanation``), safe to show: what a server chose in them (a realm, a header value in a parser's
    /// error, a redirect's URL, a certificate's names) is escaped by `DisplayText`.
    public var description: String {
        var text = DisplayText("\(code) (\(code.rawValue)): \(message)").description
        if let url { text += DisplayText(" [\(url.redactingPassword)]").description }
        if let decision = trustDecision, !decision.reasons.isEmpty {
            text += "; " + decision.reasons.map(\.description).joined(separator: "; ")
        }
        if let underlying { text += DisplayText(" (\(underlying))").description }
        return text + ". Fix: " + explanation.fix
    }

    /// The fields as `dump` and the debugger show them, the URL's user-info hidden as in ``description``: a
    /// default mirror would print a URL's password to any log that dumps the error.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "code": code as Any, "message": message, "url": url?.redactingPassword as Any, "trustDecision": trustDecision as Any,
                "underlying": underlying as Any, "limit": limit as Any, "protocolViolation": protocolViolation as Any,
                "isIncompleteBody": isIncompleteBody, "handshakeFailure": handshakeFailure as Any,
            ], displayStyle: .struct)
    }

    /// ``description``, for `LocalizedError` (`error.localizedDescription`, SwiftUI alerts, logs that
    /// print `localizedDescription`). Secret-free like the description: the URL's password is hidden.
    public var errorDescription: String? { description }

    /// The code a refused server-trust decision maps to, as URLSession would report it.
    static func code(for decision: TrustDecision) -> Code {
        for reason in decision.reasons {
            switch reason {
            case .expired: return .serverCertificateHasBadDate
            case .notYetValid: return .serverCertificateNotYetValid
            default: continue
            }
        }
        for reason in decision.reasons {
            if case .noPathToTrustedAnchor = reason { return .serverCertificateHasUnknownRoot }
        }
        return .serverCertificateUntrusted
    }
}

extension URL {
    /// The URL as text with its user-info replaced by `***` (for messages and logs; ``URLUserInfo``).
    var redactingPassword: String { URLUserInfo.redacted(self) }
}

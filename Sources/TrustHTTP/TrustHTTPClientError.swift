import NIOHTTPCompression
import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The one error a ``TrustHTTPClient`` throws: a URLError-style code users already know, a message
/// that says what happened, and — for server trust — the full `TrustDecision`.
public struct TrustHTTPClientError: Error, Sendable, CustomStringConvertible, LocalizedError, CustomReflectable {
    /// Foundation's `URLError` codes, with the same numbers and names. A code is a value, not an enum case: codes
    /// come in minor versions without breaking a client, so compare with `==` or `switch` with a `default:`.
    public struct Code: RawRepresentable, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The codes this version knows, for this package's exhaustive switches (every code has its words).
        package enum Known: Int, Sendable, Hashable, CaseIterable {
            case cancelled = -999
            case badURL = -1000
            case timedOut = -1001
            case unsupportedURL = -1002
            case cannotFindHost = -1003
            case cannotConnectToHost = -1004
            case networkConnectionLost = -1005
            case httpTooManyRedirects = -1007
            case badServerResponse = -1011
            case responseTooLarge = -1103
            case cannotDecodeContentData = -1016
            case userCancelledAuthentication = -1012
            case userAuthenticationRequired = -1013
            case secureConnectionFailed = -1200
            case serverCertificateHasBadDate = -1201
            case serverCertificateUntrusted = -1202
            case serverCertificateHasUnknownRoot = -1203
            case serverCertificateNotYetValid = -1204
            case clientCertificateRejected = -1205
            case clientCertificateRequired = -1206
            case requestBodyStreamExhausted = -1021
            case fileDoesNotExist = -1100
            case fileIsDirectory = -1101
            case noPermissionsToReadFile = -1102
            case cannotCreateFile = -3000
            case cannotWriteToFile = -3003
        }

        /// Which code this is.
        package let known: Known

        package init(_ known: Known) { self.known = known }

        /// The code with this `URLError` number, or `nil` when it is none of ``allCases``.
        public init?(rawValue: Int) {
            guard let known = Known(rawValue: rawValue) else { return nil }
            self.init(known)
        }

        /// The `URLError` number (`-1202`).
        public var rawValue: Int { known.rawValue }

        /// The code's name (`serverCertificateUntrusted`).
        public var description: String { "\(known)" }

        /// Every code this version of the package knows.
        public static var allCases: [Code] { Known.allCases.map(Code.init) }

        /// The request, or one of its challenges, was cancelled.
        public static let cancelled = Code(.cancelled)
        /// The URL, the method or the host name is not valid.
        public static let badURL = Code(.badURL)
        /// The request, or a challenge handler, did not finish in time.
        public static let timedOut = Code(.timedOut)
        /// The URL's scheme is neither `http` nor `https`.
        public static let unsupportedURL = Code(.unsupportedURL)
        /// The host name could not be resolved.
        public static let cannotFindHost = Code(.cannotFindHost)
        /// No connection to the host could be made.
        public static let cannotConnectToHost = Code(.cannotConnectToHost)
        /// The connection failed or was lost during the request.
        public static let networkConnectionLost = Code(.networkConnectionLost)
        /// More redirects than the configuration's `maximumRedirects`.
        public static let httpTooManyRedirects = Code(.httpTooManyRedirects)
        /// The server or proxy answered with something unusable (a wrong `rspauth`, a refused CONNECT, a broken HTTP/2 rule).
        public static let badServerResponse = Code(.badServerResponse)
        /// The response exceeded a ``ResponseLimits`` bound (body, head, header fields, 1xx responses);
        /// ``TrustHTTPClientError/limit`` says which. Foundation's `dataLengthExceedsMaximum`.
        public static let responseTooLarge = Code(.responseTooLarge)
        /// A compressed body (``ResponseDecompression``) is not valid gzip or deflate. Foundation's `cannotDecodeContentData`.
        public static let cannotDecodeContentData = Code(.cannotDecodeContentData)
        /// An HTTP authentication challenge was cancelled.
        public static let userCancelledAuthentication = Code(.userCancelledAuthentication)
        /// An HTTP authentication challenge could not be answered.
        public static let userAuthenticationRequired = Code(.userAuthenticationRequired)
        /// TLS could not be set up, the handshake failed, or the negotiated TLS version is refused.
        public static let secureConnectionFailed = Code(.secureConnectionFailed)
        /// A certificate on the server's path had expired.
        public static let serverCertificateHasBadDate = Code(.serverCertificateHasBadDate)
        /// The server is not trusted.
        public static let serverCertificateUntrusted = Code(.serverCertificateUntrusted)
        /// The server's chain leads to no trusted anchor.
        public static let serverCertificateHasUnknownRoot = Code(.serverCertificateHasUnknownRoot)
        /// A certificate on the server's path is not yet valid.
        public static let serverCertificateNotYetValid = Code(.serverCertificateNotYetValid)
        /// The server refused the client certificate, or the handler's answer was not an identity.
        public static let clientCertificateRejected = Code(.clientCertificateRejected)
        /// The server requires a client certificate and none was sent.
        public static let clientCertificateRequired = Code(.clientCertificateRequired)
        /// A streamed request body (``TrustHTTPClientRequest/Body``) failed: its sequence threw, or it yielded fewer or
        /// more bytes than its declared length. Foundation's `requestBodyStreamExhausted`.
        public static let requestBodyStreamExhausted = Code(.requestBodyStreamExhausted)
        /// The upload file (``TrustHTTPClientRequest/Body/file(_:chunkSize:)``) does not exist or cannot be opened.
        public static let fileDoesNotExist = Code(.fileDoesNotExist)
        /// The upload file is a directory or another file that is not a regular file.
        public static let fileIsDirectory = Code(.fileIsDirectory)
        /// The upload file cannot be read.
        public static let noPermissionsToReadFile = Code(.noPermissionsToReadFile)
        /// A download's file could not be created (``TrustHTTPClient/download(for:to:progress:)``).
        public static let cannotCreateFile = Code(.cannotCreateFile)
        /// A download's file could not be written, closed or moved into place.
        public static let cannotWriteToFile = Code(.cannotWriteToFile)
    }

    /// What kind of failure, as a `URLError` code.
    public package(set) var code: Code
    /// What happened, in words.
    public package(set) var message: String
    /// The URL of the request that failed.
    public package(set) var url: URL?
    /// For server-trust failures: the evaluation, with reasons, presented and validated chains, pins.
    public package(set) var trustDecision: TrustDecision?
    /// The lower-level error, described (NIO, NIOSSL, the OS).
    package var underlying: String?
    /// The lower-level error itself (NIO, NIOSSL, the OS), for code that inspects it; ``description`` quotes it.
    public package(set) var underlyingError: (any Error)?
    /// For ``Code/responseTooLarge``: the limit the response exceeded.
    public package(set) var limit: ResponseLimit?
    /// For ``Code/badServerResponse`` raised by the protocol itself: which rule the server broke.
    public package(set) var protocolViolation: ProtocolViolation?
    /// For ``Code/networkConnectionLost`` while reading a body: the server closed the connection in
    /// an orderly way before the body's end (fewer bytes than its `Content-Length`, a chunked body
    /// without its last chunk; RFC 9112 §8) — curl's "partial file" — rather than the connection
    /// failing (a reset, a TLS connection cut without close_notify).
    public package(set) var isIncompleteBody = false
    /// For a failed TLS handshake (``Code/secureConnectionFailed``, ``Code/clientCertificateRequired``): why,
    /// as far as the TLS library says; ``explanation`` words it.
    public package(set) var handshakeFailure: HandshakeFailure?

    /// A rule of the HTTP protocol a server broke: one of the static members, compared with `==` (rules are added
    /// in minor versions without breaking a client).
    public struct ProtocolViolation: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The stable identifier (`malformed-http1-response`).
        public let rawValue: String

        /// The violation with this identifier.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The stable identifier, ``rawValue``.
        public var description: String { rawValue }

        /// An HTTP/1.1 response head NIO's parser refused: a bare CR or LF, a NUL, an invalid token
        /// (RFC 9112 §2.2, §5; RFC 9110 §5.5).
        public static let malformedHTTP1Response = Self(rawValue: "malformed-http1-response")
        /// An HTTP/2 response with a field value RFC 9110 §5.5 does not allow: a control character
        /// (ESC, BEL, BS…; RFC 9113 §8.2.1, §8.1.1) — refused as an HTTP/1.1 head with one is.
        public static let malformedHTTP2Response = Self(rawValue: "malformed-http2-response")
        /// An HTTP/2 rule: a frame flood, a flow-control violation, GOAWAY abuse, an invalid
        /// `:status` (RFC 9113).
        public static let http2 = Self(rawValue: "http2")
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

    /// An error caused by a lower-level `underlyingError`, kept as it is (``underlyingError``) and quoted in
    /// ``description``.
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
            switch reason.kind {
            case .expired: return .serverCertificateHasBadDate
            case .notYetValid: return .serverCertificateNotYetValid
            default: continue
            }
        }
        for reason in decision.reasons {
            if reason.kind == .noPathToTrustedAnchor { return .serverCertificateHasUnknownRoot }
        }
        return .serverCertificateUntrusted
    }
}

extension URL {
    /// The URL as text with its user-info replaced by `***` (for messages and logs; ``URLUserInfo``).
    var redactingPassword: String { URLUserInfo.redacted(self) }
}

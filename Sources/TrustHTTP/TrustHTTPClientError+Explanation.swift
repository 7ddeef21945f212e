import NIOCore
import NIOSSL
import Trust
import TrustNIO

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension TrustHTTPClientError {
    /// What an error means and what usually fixes it: the one wording of each error, for every program that
    /// shows one (``TrustHTTPClientError/description``, `trust inspect`, `trust demo`).
    public struct Explanation: Hashable, Sendable, CustomStringConvertible {
        /// What happened, in a few words.
        public let summary: String
        /// What usually fixes it.
        public let fix: String

        /// `summary. Fix: fix.`
        public var description: String { "\(summary). Fix: \(fix)." }
    }

    /// What this error means and its likely fix: the handshake's failure when it is known, else the code's —
    /// with, for a refused server, the fix of its first trust reason (`TrustFailureReason.explanation`).
    public var explanation: Explanation {
        if let handshakeFailure { return handshakeFailure.explanation(url: url) }
        let general = code.explanation
        if let reason = trustDecision?.reasons.first {
            return Explanation(summary: general.summary, fix: reason.explanation.fix)
        }
        return general
    }

    /// Why a TLS handshake failed, as far as the TLS library says: classified once, here, from NIOSSL's typed
    /// errors and BoringSSL's reason codes (`BoringSSLErrorText`, the one reader of that text), for a
    /// ``TrustHTTPClient``'s connections and for `trust inspect`.
    /// One of the static members, compared with `==` (failures are told apart more finely in minor versions
    /// without breaking a client).
    public struct HandshakeFailure: Hashable, Sendable {
        /// The failures this version tells apart, for this package's exhaustive switches.
        package enum Kind: Hashable, Sendable {
            case notTLS
            case protocolVersion
            case noSharedCipher
            case clientCertificateRequired
            case closedDuringHandshake
            case other(reason: String?)
        }

        /// Which failure this is.
        package let kind: Kind

        package init(_ kind: Kind) { self.kind = kind }

        /// The server does not speak TLS on that port (a plain-HTTP port, a proxy port).
        public static let notTLS = Self(.notTLS)
        /// The server offers only TLS versions below the minimum (TLS 1.2; RFC 8996 deprecates older ones).
        public static let protocolVersion = Self(.protocolVersion)
        /// No cipher suite or signature algorithm in common.
        public static let noSharedCipher = Self(.noSharedCipher)
        /// The server asked for a client certificate (RFC 8446 §4.3.2) and, given none, ended the handshake.
        public static let clientCertificateRequired = Self(.clientCertificateRequired)
        /// The server closed the connection during the handshake without a TLS alert.
        public static let closedDuringHandshake = Self(.closedDuringHandshake)
        /// Anything else, with BoringSSL's reason code when there is one (`CERTIFICATE_VERIFY_FAILED`).
        package static func other(reason: String?) -> Self { Self(.other(reason: reason)) }

        /// BoringSSL's reason code, for a failure told apart by none of the other members.
        public var reason: String? {
            if case .other(let reason) = kind { return reason }
            return nil
        }

        /// Classifies `error`, the error a handshake failed with.
        /// - Parameter clientCertificateRequested: the server sent a CertificateRequest and no certificate was
        ///   sent: a refusal alert then means that one is required.
        package init(_ error: any Error, clientCertificateRequested: Bool = false) {
            // The peer closed the connection before the handshake ended: NIOSSL reports it as a handshake failure
            // whose only error is its own synthetic `eofDuringHandshake`, not as a channel error.
            if case NIOSSLError.handshakeFailed(.sslError(let stack)) = error, stack.contains(.eofDuringHandshake) {
                self = clientCertificateRequested ? .clientCertificateRequired : .closedDuringHandshake
                return
            }
            guard error is NIOSSLError || error is BoringSSLError else {
                let closed =
                    (error as? ChannelError).map { $0 == .eof || $0 == .ioOnClosedChannel } ?? false
                    || error is ConnectionClosedError
                if closed {
                    self = clientCertificateRequested ? .clientCertificateRequired : .closedDuringHandshake
                } else {
                    self = .other(reason: nil)
                }
                return
            }
            self.init(reading: BoringSSLErrorText("\(error)"), clientCertificateRequested: clientCertificateRequested)
        }

        /// Classifies BoringSSL's reason codes.
        package init(reading: BoringSSLErrorText, clientCertificateRequested: Bool) {
            if reading.certificateRequired || (clientCertificateRequested && reading.clientCertificateRefusal != nil) {
                self = .clientCertificateRequired
                return
            }
            switch reading.problem {
            case .notTLS: self = .notTLS
            case .protocolVersion: self = .protocolVersion
            case .noSharedCipher: self = .noSharedCipher
            case .other: self = .other(reason: reading.reason)
            }
        }

        /// What the failure means and its likely fix; `url` (the request's) makes a fix concrete.
        package func explanation(url: URL?) -> Explanation {
            switch kind {
            case .notTLS:
                return Explanation(
                    summary: "the server does not speak TLS on this port (a plain-HTTP port?)",
                    fix: "try \(Self.plainHTTP(url) ?? "http://") instead, or the server's TLS port")
            case .protocolVersion:
                return Explanation(
                    summary: "the server does not offer TLS 1.2 or 1.3 (it only speaks an older, insecure version)",
                    fix: "upgrade the server's TLS configuration to TLS 1.2 or 1.3")
            case .noSharedCipher:
                return Explanation(
                    summary: "the server and this client share no cipher suite or signature algorithm",
                    fix: "configure the server for TLS 1.2 or 1.3 with modern cipher suites (ECDHE with AES-GCM or ChaCha20-Poly1305)")
            case .clientCertificateRequired:
                return Explanation(
                    summary: "the server asked for a client certificate and refused the handshake without one",
                    fix: TrustHTTPClientError.Code.clientCertificateRequired.explanation.fix)
            case .closedDuringHandshake:
                return Explanation(
                    summary: "the server closed the connection during the TLS handshake",
                    fix: "check the server's TLS configuration and logs (it may require a client certificate, or another server name)")
            case .other(let reason):
                return Explanation(
                    summary: "the TLS handshake failed" + (reason.map { " (BoringSSL: \($0))" } ?? ""),
                    fix: "check the server's TLS configuration and logs")
            }
        }

        /// `url` as `http://host:port/`, shown safely (no user-info, path or query; escaped).
        private static func plainHTTP(_ url: URL?) -> String? {
            guard let url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false), components.host != nil else { return nil }
            components.scheme = "http"
            (components.user, components.password, components.query, components.fragment) = (nil, nil, nil, nil)
            components.path = "/"
            if components.port == nil { components.port = 443 }
            return components.string.map(DisplayText.escaped)
        }
    }
}

extension TrustHTTPClientError.Code {
    /// What an error of this code means and its likely fix. Exhaustive: a new code cannot be added without
    /// its words.
    public var explanation: TrustHTTPClientError.Explanation {
        let (summary, fix) = words
        return TrustHTTPClientError.Explanation(summary: summary, fix: fix)
    }

    private var words: (String, String) {
        switch known {
        case .cancelled: return ("the request was cancelled", "nothing, if that was meant; else see what cancelled the task or its challenge")
        case .badURL: return ("the URL, the method or the host name is not valid", "check the URL's host name and port")
        case .timedOut: return ("the request did not finish in time", "check that the server is reachable and answering, or allow more time")
        case .unsupportedURL: return ("the URL's scheme is neither http nor https", "use an http:// or https:// URL")
        case .cannotFindHost: return ("the host name could not be resolved", "check the host name's spelling and this machine's DNS settings")
        case .cannotConnectToHost:
            return (
                "no connection to the host could be made", "check that the server is running and listening on that port, and that no firewall is in the way"
            )
        case .networkConnectionLost:
            return ("the connection failed or was lost during the request", "try again; if it goes on, check the server and what is between")
        case .httpTooManyRedirects: return ("the server redirected more times than allowed", "check the server for a redirect loop, or allow more redirects")
        case .badServerResponse:
            return ("the server or proxy answered with something unusable", "check the server or proxy: its answer breaks the HTTP protocol")
        case .responseTooLarge: return ("the response exceeded a limit", "raise the response limit if that size is expected")
        case .cannotDecodeContentData:
            return ("the compressed body is not valid gzip or deflate", "check the server's Content-Encoding, or ask for the body uncompressed")
        case .userCancelledAuthentication: return ("the HTTP authentication challenge was cancelled", "give credentials, or let the challenge be answered")
        case .userAuthenticationRequired:
            return (
                "the server requires HTTP authentication that could not be answered", "give a user name and password the server accepts, for a scheme it offers"
            )
        case .secureConnectionFailed:
            return ("the TLS connection could not be set up", "check that the server speaks TLS 1.2 or 1.3 on that port, with modern cipher suites")
        case .serverCertificateHasBadDate:
            return ("a certificate on the server's path has expired", "renew the server's certificate (or check this machine's clock)")
        case .serverCertificateUntrusted: return ("the server is not trusted", "see the trust reasons: each says what fixes it")
        case .serverCertificateHasUnknownRoot:
            return ("the server's chain leads to no trusted anchor", "make the server send its intermediates, or add its CA to the anchors if you trust it")
        case .serverCertificateNotYetValid:
            return ("a certificate on the server's path is not yet valid", "check this machine's clock, or the certificate's dates")
        case .clientCertificateRejected:
            return (
                "the server refused the client certificate", "use a certificate from a CA the server trusts, valid now and allowed for client authentication"
            )
        case .clientCertificateRequired:
            return ("the server requires a client certificate and none was sent", "give a client certificate and its private key (a client identity)")
        case .requestBodyStreamExhausted:
            return ("the streamed request body failed or did not match its length", "check the body's sequence and its declared length")
        case .fileDoesNotExist: return ("the upload file does not exist or cannot be opened", "check the file's path")
        case .fileIsDirectory: return ("the upload file is not a regular file", "give a regular file")
        case .noPermissionsToReadFile: return ("the upload file cannot be read", "check the file's permissions")
        case .cannotCreateFile: return ("the download's file could not be created", "check that its folder exists and can be written")
        case .cannotWriteToFile: return ("the download's file could not be written", "check the free space and permissions where it goes")
        }
    }
}

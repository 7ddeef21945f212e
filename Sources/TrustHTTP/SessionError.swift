import Foundation
import Trust

/// The one error a ``Session`` throws: a URLError-style code users already know, a message
/// that says what happened, and — for server trust — the full `TrustDecision`.
public struct SessionError: Error, Sendable, CustomStringConvertible {
    /// Foundation's `URLError` codes, with the same numbers.
    public enum Code: Int, Sendable, Hashable, CustomStringConvertible {
        case cancelled = -999
        case badURL = -1000
        case timedOut = -1001
        case unsupportedURL = -1002
        case cannotFindHost = -1003
        case cannotConnectToHost = -1004
        case networkConnectionLost = -1005
        case httpTooManyRedirects = -1007
        case badServerResponse = -1011
        case userCancelledAuthentication = -1012
        case userAuthenticationRequired = -1013
        case secureConnectionFailed = -1200
        case serverCertificateHasBadDate = -1201
        case serverCertificateUntrusted = -1202
        case serverCertificateHasUnknownRoot = -1203
        case serverCertificateNotYetValid = -1204
        case clientCertificateRejected = -1205
        case clientCertificateRequired = -1206

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
            case .userCancelledAuthentication: return "userCancelledAuthentication"
            case .userAuthenticationRequired: return "userAuthenticationRequired"
            case .secureConnectionFailed: return "secureConnectionFailed"
            case .serverCertificateHasBadDate: return "serverCertificateHasBadDate"
            case .serverCertificateUntrusted: return "serverCertificateUntrusted"
            case .serverCertificateHasUnknownRoot: return "serverCertificateHasUnknownRoot"
            case .serverCertificateNotYetValid: return "serverCertificateNotYetValid"
            case .clientCertificateRejected: return "clientCertificateRejected"
            case .clientCertificateRequired: return "clientCertificateRequired"
            }
        }
    }

    public var code: Code
    /// What happened, in words.
    public var message: String
    /// The URL of the request that failed.
    public var url: URL?
    /// For server-trust failures: the evaluation, with reasons, presented and validated chains, pins.
    public var trustDecision: TrustDecision?
    /// The lower-level error, described (NIO, NIOSSL, the OS).
    public var underlying: String?

    public init(_ code: Code, _ message: String, url: URL? = nil, trustDecision: TrustDecision? = nil, underlying: String? = nil) {
        self.code = code
        self.message = message
        self.url = url
        self.trustDecision = trustDecision
        self.underlying = underlying
    }

    /// The URLError code number (e.g. -1202).
    public var errorCode: Int { code.rawValue }

    public var description: String {
        var text = "\(code) (\(code.rawValue)): \(message)"
        if let url { text += " [\(url.redactingPassword)]" }
        if let decision = trustDecision, !decision.reasons.isEmpty {
            text += "; " + decision.reasons.map(\.description).joined(separator: "; ")
        }
        if let underlying { text += " (\(underlying))" }
        return text
    }

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
    /// The URL as text with any password replaced by `***` (for messages and logs).
    var redactingPassword: String {
        guard password(percentEncoded: true) != nil, var components = URLComponents(url: self, resolvingAgainstBaseURL: false) else { return absoluteString }
        components.percentEncodedPassword = "***"
        return components.string ?? absoluteString
    }
}

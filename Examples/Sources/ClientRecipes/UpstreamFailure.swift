// What a service that calls an upstream does with a failed request: sort the `TrustHTTPClientError` into what the
// caller can act on (retry, alert, fix a configuration), in data. Every branch reads a typed field of the error;
// none parses its message.
import Foundation
import Trust
import TrustHTTP

/// A failed upstream call, sorted for the service's own callers and logs.
public struct UpstreamFailure: Sendable, CustomStringConvertible {
    /// Why the call failed, as the service tells it apart.
    public enum Kind: Sendable, Equatable {
        /// The upstream's certificate was refused; the reasons' codes (`expired`, `pin-mismatch`…).
        case refusedCertificate([String])
        /// Revocation could not be checked (the responders or CRLs were unreachable): an alert, not the peer's fault.
        case revocationUnavailable
        /// The TLS handshake failed before any certificate was judged.
        case handshake(String)
        /// The upstream answered more than the service accepts.
        case tooLarge(observed: Int, limit: Int, fromProxy: Bool)
        /// The call ran out of time.
        case timedOut
        /// The upstream could not be reached, or the connection was lost (`truncated`: during the body).
        case unreachable(truncated: Bool)
        /// The upstream's login was refused or cancelled.
        case unauthorized
        /// A local file could not be written (a download).
        case localFile
        /// Anything else, by its code.
        case other(TrustHTTPClientError.Code)
    }

    /// What happened.
    public let kind: Kind
    /// The URL that failed (with no user-info).
    public let url: URL?
    /// Foundation's `URLError` number for the failure, for dashboards shared with Apple clients.
    public let errorCode: Int
    /// The library's one-line summary and fix, for the service's operators.
    public let advice: String

    /// Sorts `error`.
    public init(_ error: TrustHTTPClientError) {
        url = error.url
        errorCode = error.errorCode
        advice = error.explanation.description
        kind = Self.kind(of: error)
    }

    private static func kind(of error: TrustHTTPClientError) -> Kind {
        if let decision = error.trustDecision, !decision.isTrusted {
            let onlyRevocation = decision.reasons.allSatisfy { $0.kind == .revocationStatusUnknown }
            return onlyRevocation ? .revocationUnavailable : .refusedCertificate(decision.reasons.map(\.code))
        }
        if let failure = error.handshakeFailure { return .handshake(Self.describe(failure)) }
        if let limit = error.limit { return .tooLarge(observed: limit.observed, limit: limit.limit, fromProxy: limit.fromProxy) }
        switch error.code {
        case .timedOut: return .timedOut
        case .cannotConnectToHost, .cannotFindHost, .networkConnectionLost: return .unreachable(truncated: error.isIncompleteBody)
        case .userAuthenticationRequired, .userCancelledAuthentication: return .unauthorized
        case .cannotCreateFile, .cannotWriteToFile: return .localFile
        default: return .other(error.code)
        }
    }

    private static func describe(_ failure: TrustHTTPClientError.HandshakeFailure) -> String {
        switch failure {
        case .notTLS: "the port does not speak TLS"
        case .protocolVersion: "no TLS version in common"
        case .noSharedCipher: "no cipher suite in common"
        case .clientCertificateRequired: "the upstream wants a client certificate"
        case .closedDuringHandshake: "the upstream closed the connection during the handshake"
        default: "TLS alert: \(failure.reason ?? "unnamed")"
        }
    }

    /// Whether the same call may succeed if made again later.
    public var isRetryable: Bool {
        switch kind {
        case .timedOut, .unreachable, .revocationUnavailable: true
        default: false
        }
    }

    public var description: String { "\(kind) (\(errorCode))" }

    /// The runbook's table: every code the client fails with, its number, what it means and the likely fix.
    public static func runbook() -> [String] {
        TrustHTTPClientError.Code.allCases.map { code in
            "\(code) (\(code.rawValue)): \(code.explanation.summary). Fix: \(code.explanation.fix)."
        }
    }
}

import HTTPTypes
import Tracing
import Trust

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A span per request (swift-distributed-tracing), as AsyncHTTPClient makes one: kind `client`, named
/// after the method, from the caller's `ServiceContext`, covering redirects and authentication retries —
/// until the body is read (`data(for:)`) or the response head arrives (`bytes(for:)`). The trace context
/// is injected into the request's headers (e.g. W3C `traceparent`, as the tracer propagates it).
///
/// Attributes (OpenTelemetry's HTTP client and TLS conventions, plus `trust.*`): `http.request.method`,
/// `url.scheme`, `server.address`, `server.port`, `http.response.status_code`,
/// `network.protocol.version` (`1.1`, `2`), `tls.protocol.version` (`1.2`, `1.3`), `trust.decision`
/// (`trusted`, `refused`), `trust.policy`, `trust.reasons` (reason codes of a refusal), `trust.override` (who
/// replaced the evaluator's decision: `challenge-handler`, `allow-invalid-certificates`), `error.type`
/// (the ``TrustHTTPClientError/Code`` name). Like the logs and metrics, nothing carries a secret: no URL path,
/// query or user-info, no header value. A status of 400 or more, or an error, sets the span's status to
/// error (a client span's rule).
struct SessionTracing: Sendable {
    let tracer: (any Tracer)?

    init(_ configuration: TrustHTTPClientConfiguration) {
        tracer = configuration.tracer
    }

    /// Starts the span of `request` and injects its context into the request's headers.
    func start(_ request: inout TrustHTTPClientRequest) -> (any Span)? {
        let tracer = self.tracer ?? InstrumentationSystem.tracer
        let span = tracer.startSpan(request.method, context: ServiceContext.current ?? .topLevel, ofKind: .client)
        guard span.isRecording else {
            span.end()
            return nil
        }
        span.attributes["http.request.method"] = request.method
        span.attributes["url.scheme"] = request.url.scheme?.lowercased() ?? ""
        if let origin = Origin(request.url) {
            span.attributes["server.address"] = origin.host
            span.attributes["server.port"] = origin.port
        }
        tracer.inject(span.context, into: &request, using: RequestHeaderInjector())
        return span
    }

    /// The connection a request went out on: HTTP and TLS versions, the trust decision it was opened with.
    static func describe(_ connection: Connection, on span: any Span) {
        span.attributes["network.protocol.version"] = connection.isHTTP2 ? "2" : "1.1"
        if let tls = connection.tlsVersion?.displayName {
            span.attributes["tls.protocol.version"] = tls.hasPrefix("TLSv") ? String(tls.dropFirst(4)) : tls
        }
        if let decision = connection.serverTrust {
            describe(decision, on: span)
        }
    }

    static func describe(_ decision: TrustDecision, on span: any Span) {
        span.attributes["trust.decision"] = decision.isTrusted ? "trusted" : "refused"
        span.attributes["trust.policy"] = decision.policy.description
        if !decision.reasons.isEmpty {
            span.attributes["trust.reasons"] = decision.reasons.map(\.code)
        }
        if let override = decision.override {
            span.attributes["trust.override"] = override.origin.rawValue
        }
    }

    /// The response's status.
    static func finished(_ statusCode: Int, on span: any Span) {
        span.attributes["http.response.status_code"] = statusCode
        if statusCode >= 400 { span.setStatus(SpanStatus(code: .error)) }
    }

    /// A failed request: the error's code, the refused decision if trust failed.
    static func failed(_ error: any Error, on span: any Span) {
        if let error = error as? TrustHTTPClientError {
            span.attributes["error.type"] = "\(error.code)"
            if let decision = error.trustDecision { describe(decision, on: span) }
            // The error's own description is secret-free (TrustHTTPClientError redacts URLs).
            span.recordError(error)
        } else {
            span.attributes["error.type"] = String(describing: type(of: error))
        }
        span.setStatus(SpanStatus(code: .error))
    }
}

/// Writes a propagated trace header into a ``TrustHTTPClientRequest`` (replacing one of the same name).
struct RequestHeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into request: inout TrustHTTPClientRequest) {
        guard let name = HTTPField.Name(key) else { return }
        request.setHeader(name, value)
    }
}
